// Move type tags: the string form used in JSON view requests ("vector<u8>",
// "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>") and the BCS TypeTag enum.
// The string form is read as a node reads it (move-core-types' parser): ASCII
// whitespace between tokens, addresses with 0x or 0X, names that start with a
// letter and are no keyword, type arguments that may be empty or end with a comma.
import { parseAddress } from './address.js';
import { IDENTIFIER } from './function-id.js';

export type TypeTag =
  | { kind: 'bool' | 'u8' | 'u16' | 'u32' | 'u64' | 'u128' | 'u256' | 'address' | 'signer' }
  | { kind: 'vector'; of: TypeTag }
  | { kind: 'struct'; address: string; module: string; name: string; typeArgs: TypeTag[] };

/**
 * The BCS TypeTag enum's variants, by index, as a node numbers them
 * (move-core-types' TypeTag; 11 and on, function types and signed integers, are
 * not types this module says).
 */
export const TYPE_TAG_VARIANTS: ReadonlyArray<TypeTag['kind']> = [
  'bool',
  'u8',
  'u64',
  'u128',
  'address',
  'signer',
  'vector',
  'struct',
  'u16',
  'u32',
  'u256',
];

const PRIMITIVES = new Set(['bool', 'u8', 'u16', 'u32', 'u64', 'u128', 'u256', 'address', 'signer']);
/** Words the parser reads as keywords: never a module or struct name. */
const KEYWORDS = new Set([...PRIMITIVES, 'vector', 'true', 'false']);
/** A node refuses a type nested this deep (move-core-types' MAX_TYPE_TAG_NESTING). */
const MAX_DEPTH = 8;

/** Parses a Move type string; null when it is not one. */
export function parseTypeTag(text: string): TypeTag | null {
  const tokens = tokenize(text);
  if (tokens === null) return null;
  let pos = 0;
  const name = (): string | null => {
    const token = tokens[pos++];
    return token !== undefined && IDENTIFIER.test(token) && !KEYWORDS.has(token) ? token : null;
  };

  const parse = (depth: number): TypeTag | null => {
    if (depth >= MAX_DEPTH) return null;
    const head = tokens[pos++];
    if (head === undefined) return null;
    if (head === 'vector') {
      if (tokens[pos++] !== '<') return null;
      const of = parse(depth + 1);
      if (of === null || tokens[pos++] !== '>') return null;
      return { kind: 'vector', of };
    }
    if (PRIMITIVES.has(head)) return { kind: head } as TypeTag;
    if (!/^0[xX]/.test(head)) return null;
    const address = parseAddress('0x' + head.slice(2));
    if (address === null || tokens[pos++] !== '::') return null;
    const module = name();
    if (module === null || tokens[pos++] !== '::') return null;
    const struct = name();
    if (struct === null) return null;
    const typeArgs: TypeTag[] = [];
    if (tokens[pos] === '<') {
      pos++;
      // Empty, or each argument followed by ',' or by the closing '>' (a trailing comma is allowed).
      while (tokens[pos] !== '>') {
        const arg = parse(depth + 1);
        if (arg === null) return null;
        typeArgs.push(arg);
        if (tokens[pos] === '>') break;
        if (tokens[pos++] !== ',') return null;
      }
      pos++;
    }
    return { kind: 'struct', address, module, name: struct, typeArgs };
  };

  const tag = parse(0);
  return tag !== null && pos === tokens.length ? tag : null;
}

/** The tokens between ASCII whitespace, or null at a character no token starts with. */
function tokenize(text: string): string[] | null {
  const tokens: string[] = [];
  const re = /[ \t\n\f\r]*(::|<|>|,|0[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9_]*)/y;
  let last = 0;
  for (;;) {
    re.lastIndex = last;
    const match = re.exec(text);
    if (match === null) break;
    tokens.push(match[1]);
    last = re.lastIndex;
  }
  return /^[ \t\n\f\r]*$/.test(text.slice(last)) ? tokens : null;
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
