// The answer format a node picks from Accept (aptos-core api/src/accept_type.rs
// over poem's Accept extractor, which reads media types with the mime crate):
// - each Accept header that is visible ASCII is split at commas, each element
//   trimmed; an element that is not a media type, or whose weight (what follows
//   ";q=") is no number, is dropped;
// - the elements are ordered by weight, the heaviest first, in their order where equal;
// - the first element that is exactly application/json or application/x-bcs, in any
//   case and with no parameter beside its weight, decides; none: JSON.
// Content-Type is compared by its media type alone, lower-case, parameters dropped.

export type SimAnswerFormat = 'json' | 'bcs';

const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;
const isToken = (c: string | undefined): boolean => c !== undefined && TCHAR.test(c);

/** Rust's f32::from_str: a sign, then inf, infinity, nan, or decimal digits with a point and an exponent. */
const RUST_FLOAT = /^[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$/i;

/** `(q * 1000.0) as i32`: truncated toward zero, saturating, NaN as 0. */
function weight(q: string): number | null {
  if (!RUST_FLOAT.test(q)) return null;
  const lower = q.toLowerCase();
  const value = lower.includes('nan')
    ? 0
    : lower.includes('inf')
      ? (lower.startsWith('-') ? -1 : 1) * Infinity
      : Number(q);
  return Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(Math.fround(Math.fround(value) * 1000))));
}

/** The mime crate's parse: the media type as it compares (lower-case, parameters kept), or null. */
function mimeOf(text: string): string | null {
  if (text === '*/*') return text;
  const slash = text.indexOf('/');
  if (slash <= 0) return null;
  for (let i = 0; i < slash; i++) if (!isToken(text[i])) return null;
  let i = slash + 1;
  while (i < text.length && text[i] !== ';') {
    if (!isToken(text[i])) return null;
    i++;
  }
  // A ';' right after the slash is no subtype's end.
  if (i < text.length && i === slash + 1) return null;
  return paramsParse(text, i) ? text.toLowerCase() : null;
}

/** The parameters after the ';' at `semicolon`: name=value pairs, a value a token or a quoted string. */
function paramsParse(text: string, semicolon: number): boolean {
  let at = semicolon + 1;
  while (at < text.length) {
    while (text[at] === ' ') at++;
    const nameStart = at;
    while (isToken(text[at])) at++;
    if (at >= text.length || text[at] !== '=' || at === nameStart) return false;
    at++;
    if (text[at] === '"') {
      const close = text.indexOf('"', at + 1);
      if (close < 0 || close === at + 1) return false;
      for (let j = at + 1; j < close; j++) if (text.charCodeAt(j) < 32 || text.charCodeAt(j) === 127) return false;
      at = close + 1;
      while (text[at] === ' ') at++;
      if (at < text.length && text[at] !== ';') return false;
      at++;
    } else {
      const valueStart = at;
      while (isToken(text[at])) at++;
      if (at < text.length) {
        if (text[at] !== ';' || at === valueStart) return false;
        at++;
      }
    }
  }
  return true;
}

/** The format a node answers in for this Accept header (Node.js joins repeated headers with ", "). */
export function simAnswerFormat(accept: string | undefined): SimAnswerFormat {
  if (accept === undefined || !VISIBLE_ASCII.test(accept)) return 'json';
  const items: Array<{ type: string; quality: number }> = [];
  for (const raw of accept.split(',')) {
    const element = raw.trim();
    const at = element.indexOf(';q=');
    const quality = at < 0 ? 1000 : weight(element.slice(at + 3));
    const type = mimeOf(at < 0 ? element : element.slice(0, at));
    if (quality !== null && type !== null) items.push({ type, quality });
  }
  // Array.prototype.sort is stable: equal weights keep their order.
  items.sort((a, b) => b.quality - a.quality);
  for (const { type } of items) {
    if (type === 'application/json') return 'json';
    if (type === 'application/x-bcs') return 'bcs';
  }
  return 'json';
}

/** A Content-Type's media type: lower-case, without parameters; '' when absent. */
export function simMediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}
