// The answer format a node picks from Accept (aptos-core api/src/accept_type.rs
// over poem's Accept extractor, which reads media types with the mime crate):
// - each Accept header that is visible ASCII is split at commas, each element
//   trimmed; an element whose weight (what follows ";q=") is no number is dropped,
//   as is one that is no media type;
// - the elements are ordered by weight, the heaviest first, in their order where equal;
// - the first element that is exactly application/json or application/x-bcs, in any
//   case and with no parameter beside its weight, decides; none: JSON.
// Content-Type is compared by its media type alone, lower-case, parameters dropped.

export type SimAnswerFormat = 'json' | 'bcs';

const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;

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

/** The format a node answers in for this Accept header (Node.js joins repeated headers with ", "). */
export function simAnswerFormat(accept: string | undefined): SimAnswerFormat {
  if (accept === undefined || !VISIBLE_ASCII.test(accept)) return 'json';
  const items: Array<{ type: string; quality: number }> = [];
  for (const raw of accept.split(',')) {
    const element = raw.trim();
    const at = element.indexOf(';q=');
    const quality = at < 0 ? 1000 : weight(element.slice(at + 3));
    // The mime crate keeps a type's parameters and lowers its case: only a bare type can match below, so
    // what else an element holds (valid or not) decides nothing.
    const type = (at < 0 ? element : element.slice(0, at)).toLowerCase();
    if (quality !== null) items.push({ type, quality });
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
