// Canonical JSON text for cache identities: object members sorted, insignificant
// whitespace dropped, strings re-escaped one way, and numbers kept as written.
// JSON.parse would turn 12345678901234567890 and 12345678901234567891 into one
// double, so two requests a node answers differently would share a cache entry.

export class JsonSyntaxError extends Error {}

/**
 * JSON whitespace as serde_json (and RFC 8259) reads it: space, tab, LF, CR and
 * nothing else. JavaScript's `\s` and String.prototype.trim also take form feed,
 * vertical tab, NBSP, U+2028 and more, which a node refuses with a 400.
 */
export const JSON_WHITESPACE = '[ \\t\\n\\r]';

function isJsonWhitespace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The canonical text of a JSON document. Throws JsonSyntaxError when it is not JSON. */
export function canonicalJson(text: string): string {
  return canonicalize(text).text;
}

/**
 * The canonical text of each top-level member of a JSON object, by name; null when
 * the document is valid JSON but not an object. Throws JsonSyntaxError when it is not JSON.
 */
export function canonicalMembers(text: string): Map<string, string> | null {
  return canonicalize(text).members;
}

/**
 * A recursive-descent parser over one shared position: one function longer than
 * the rest reads better than its parts passing the position back and forth.
 */
function canonicalize(text: string): { text: string; members: Map<string, string> | null } {
  let topMembers: Map<string, string> | null = null;
  let pos = 0;
  const ws = (): void => {
    while (isJsonWhitespace(text[pos])) pos++;
  };
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at position ${pos}`);
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

  const value = (depth: number): string => {
    if (depth > 64) fail('nesting too deep');
    ws();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const members: Array<[string, string]> = [];
      const seen = new Set<string>();
      ws();
      if (text[pos] === '}') {
        pos++;
        if (depth === 0) topMembers = new Map();
        return '{}';
      }
      for (;;) {
        ws();
        if (text[pos] !== '"') fail('expected a member name');
        const key = string();
        if (seen.has(key)) fail(`duplicate member ${JSON.stringify(key)}`);
        seen.add(key);
        ws();
        if (text[pos] !== ':') fail("expected ':'");
        pos++;
        members.push([key, value(depth + 1)]);
        ws();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          break;
        }
        fail("expected ',' or '}'");
      }
      members.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      if (depth === 0) topMembers = new Map(members);
      return '{' + members.map(([k, v]) => JSON.stringify(k) + ':' + v).join(',') + '}';
    }
    if (c === '[') {
      pos++;
      const items: string[] = [];
      ws();
      if (text[pos] === ']') {
        pos++;
        return '[]';
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          break;
        }
        fail("expected ',' or ']'");
      }
      return '[' + items.join(',') + ']';
    }
    if (c === '"') return JSON.stringify(string());
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, pos)) {
        pos += literal.length;
        return literal;
      }
    }
    NUMBER.lastIndex = pos;
    const match = NUMBER.exec(text);
    if (match === null) fail('unexpected token');
    pos = NUMBER.lastIndex;
    return match![0];
  };

  const string = (): string => {
    STRING.lastIndex = pos;
    const match = STRING.exec(text);
    if (match === null) fail('malformed string');
    pos = STRING.lastIndex;
    const value = JSON.parse(match![0]) as string;
    // serde_json refuses an unpaired surrogate escape such as "\ud800"; so do we.
    if (LONE_SURROGATE.test(value)) fail('unpaired surrogate in a string');
    return value;
  };

  const result = value(0);
  ws();
  if (pos !== text.length) fail('trailing characters');
  return { text: result, members: topMembers };
}
