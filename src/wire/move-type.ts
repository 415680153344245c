// Move type tags: the string form used in JSON view requests ("vector<u8>",
// "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>") and the BCS TypeTag enum.
import { parseAddress } from './address.js';
import { IDENTIFIER } from './function-id.js';

export type TypeTag =
  | { kind: 'bool' | 'u8' | 'u16' | 'u32' | 'u64' | 'u128' | 'u256' | 'address' | 'signer' }
  | { kind: 'vector'; of: TypeTag }
  | { kind: 'struct'; address: string; module: string; name: string; typeArgs: TypeTag[] };

const PRIMITIVES = new Set(['bool', 'u8', 'u16', 'u32', 'u64', 'u128', 'u256', 'address', 'signer']);
/** Deeper nesting than a node accepts is refused before it reaches one. */
const MAX_DEPTH = 8;

/** Parses a Move type string; null when it is not one. */
export function parseTypeTag(text: string): TypeTag | null {
  const tokens = tokenize(text);
  if (tokens === null) return null;
  let pos = 0;

  const parse = (depth: number): TypeTag | null => {
    if (depth > MAX_DEPTH) return null;
    const head = tokens[pos++];
    if (head === undefined) return null;
    if (head === 'vector') {
      if (tokens[pos++] !== '<') return null;
      const of = parse(depth + 1);
      if (of === null || tokens[pos++] !== '>') return null;
      return { kind: 'vector', of };
    }
    if (PRIMITIVES.has(head)) return { kind: head } as TypeTag;
    const address = parseAddress(head);
    if (address === null) return null;
    if (tokens[pos++] !== '::') return null;
    const module = tokens[pos++];
    if (tokens[pos++] !== '::') return null;
    const name = tokens[pos++];
    if (module === undefined || name === undefined || !IDENTIFIER.test(module) || !IDENTIFIER.test(name)) {
      return null;
    }
    const typeArgs: TypeTag[] = [];
    if (tokens[pos] === '<') {
      pos++;
      for (;;) {
        const arg = parse(depth + 1);
        if (arg === null) return null;
        typeArgs.push(arg);
        const sep = tokens[pos++];
        if (sep === '>') break;
        if (sep !== ',') return null;
      }
    }
    return { kind: 'struct', address, module, name, typeArgs };
  };

  const tag = parse(0);
  return tag !== null && pos === tokens.length ? tag : null;
}

function tokenize(text: string): string[] | null {
  const tokens: string[] = [];
  const re = /\s*(::|<|>|,|[A-Za-z0-9_]+)/y;
  let last = 0;
  for (;;) {
    re.lastIndex = last;
    const match = re.exec(text);
    if (match === null) break;
    tokens.push(match[1]);
    last = re.lastIndex;
  }
  return text.slice(last).trim() === '' ? tokens : null;
}

/** The canonical string: full 32-byte lower-case addresses, no spaces. */
export function formatTypeTag(tag: TypeTag): string {
  switch (tag.kind) {
    case 'vector':
      return `vector<${formatTypeTag(tag.of)}>`;
    case 'struct': {
      const args = tag.typeArgs.length > 0 ? `<${tag.typeArgs.map(formatTypeTag).join(',')}>` : '';
      return `${tag.address}::${tag.module}::${tag.name}${args}`;
    }
    default:
      return tag.kind;
  }
}
