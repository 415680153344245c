// Move type tags in their string form, as a node parses them (move-core-types'
// parser.rs, behind the API's MoveType and MoveStructTag): ASCII whitespace between
// tokens; an address token is "0x" or "0X" and one or more hex digits; a name
// starts with an ASCII letter; the primitive names (u8 … u256, bool, address,
// signer, vector) and true/false are keywords, never a module or struct name;
// type arguments may be empty (`S<>`) or end with a comma (`S<u8,>`); at most 8
// levels of nesting.
import { parseNodeAddress } from './address.js';

export type SimTypeTag =
  | { kind: 'bool' | 'u8' | 'u16' | 'u32' | 'u64' | 'u128' | 'u256' | 'address' | 'signer' }
  | { kind: 'vector'; of: SimTypeTag }
  | { kind: 'struct'; address: string; module: string; name: string; typeArgs: SimTypeTag[] };

/** parse_type_tag refuses a type at this depth (safe_serialize::MAX_TYPE_TAG_NESTING). */
const MAX_NESTING = 8;
const KEYWORDS = new Set(['u8', 'u16', 'u32', 'u64', 'u128', 'u256', 'bool', 'address', 'signer', 'vector']);
const NOT_NAMES = new Set([...KEYWORDS, 'true', 'false']);

type Token = { kind: 'name' | 'address'; text: string } | { kind: '<' | '>' | ',' | '::' | 'end' };

const isAsciiWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
const isHexDigit = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isLetter = (c: string): boolean => /^[A-Za-z]$/.test(c);
const isNameChar = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z0-9_]$/.test(c);

/** The tokens of `text` with whitespace dropped, or null where the tokenizer stops. */
function tokenize(text: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '<' || c === '>' || c === ',') {
      tokens.push({ kind: c });
      i++;
    } else if (c === ':') {
      if (text[i + 1] !== ':') return null;
      tokens.push({ kind: '::' });
      i += 2;
    } else if (c === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
      let end = i + 2;
      while (isHexDigit(text[end])) end++;
      if (end === i + 2) return null;
      tokens.push({ kind: 'address', text: '0x' + text.slice(i + 2, end) });
      i = end;
    } else if (isAsciiWhitespace(c)) {
      i++;
    } else if (isLetter(c)) {
      let end = i + 1;
      while (isNameChar(text[end])) end++;
      tokens.push({ kind: 'name', text: text.slice(i, end) });
      i = end;
    } else {
      // Numbers, byte literals and every other character are tokens no type tag has.
      return null;
    }
  }
  tokens.push({ kind: 'end' });
  return tokens;
}

class Refused extends Error {}

class TypeTagParser {
  private at = 0;

  constructor(private readonly tokens: Token[]) {}

  private next(): Token {
    const token = this.tokens[this.at];
    if (token === undefined) throw new Refused();
    this.at++;
    return token;
  }

  private peek(): Token['kind'] | undefined {
    return this.tokens[this.at]?.kind;
  }

  private expect(kind: Token['kind']): void {
    if (this.next().kind !== kind) throw new Refused();
  }

  private name(): string {
    const token = this.next();
    if (token.kind !== 'name' || NOT_NAMES.has(token.text)) throw new Refused();
    return token.text;
  }

  typeTag(depth: number): SimTypeTag {
    if (depth >= MAX_NESTING) throw new Refused();
    const token = this.next();
    if (token.kind === 'name' && token.text === 'vector') {
      this.expect('<');
      const of = this.typeTag(depth + 1);
      this.expect('>');
      return { kind: 'vector', of };
    }
    if (token.kind === 'name' && KEYWORDS.has(token.text)) return { kind: token.text } as SimTypeTag;
    if (token.kind !== 'address') throw new Refused();
    const address = parseNodeAddress(token.text);
    if (address === null) throw new Refused();
    this.expect('::');
    const module = this.name();
    this.expect('::');
    const name = this.name();
    const typeArgs: SimTypeTag[] = [];
    if (this.peek() === '<') {
      this.next();
      while (this.peek() !== '>') {
        typeArgs.push(this.typeTag(depth + 1));
        if (this.peek() === '>') break;
        this.expect(',');
      }
      this.expect('>');
    }
    return { kind: 'struct', address, module, name, typeArgs };
  }

  end(): void {
    this.expect('end');
  }
}

/** A Move type as a node parses it, or null when the node refuses the text. */
export function parseNodeTypeTag(text: string): SimTypeTag | null {
  const tokens = tokenize(text);
  if (tokens === null) return null;
  const parser = new TypeTagParser(tokens);
  try {
    const tag = parser.typeTag(0);
    parser.end();
    return tag;
  } catch (err) {
    if (err instanceof Refused) return null;
    throw err;
  }
}

/** The sim's own spelling of a type: full lower-case addresses, no spaces. */
export function simTypeName(tag: SimTypeTag): string {
  switch (tag.kind) {
    case 'vector':
      return `vector<${simTypeName(tag.of)}>`;
    case 'struct': {
      const args = tag.typeArgs.length > 0 ? `<${tag.typeArgs.map(simTypeName).join(',')}>` : '';
      return `${tag.address}::${tag.module}::${tag.name}${args}`;
    }
    default:
      return tag.kind;
  }
}

/** Move identifiers (Identifier::is_valid): a letter, or an underscore and at least one more character. */
export function isMoveIdentifier(text: string): boolean {
  return /^(?:[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)$/.test(text);
}
