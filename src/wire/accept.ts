// api.md §3: the answer format a node picks from Accept (poem's Accept, read by
// aptos-core's accept_type.rs). Elements are split at commas and trimmed; a weight
// is what follows ";q=" (an element whose weight is no number is dropped); the
// heaviest element that is exactly application/json or application/x-bcs (any
// case, no other parameter) wins, the first of them where weights are equal;
// none, or a header that is not visible ASCII: JSON.

export type AnswerFormat = 'json' | 'bcs';

const VISIBLE_ASCII = /^[\t\x20-\x7e]*$/;
/** What Rust's f32::from_str reads: a sign, then inf, infinity, nan, or digits with a point and an exponent. */
const FLOAT = /^[+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)$/i;

/** `(q * 1000.0) as i32` of the weight text, or null when it is no number. */
function weightOf(text: string): number | null {
  if (!FLOAT.test(text)) return null;
  const lower = text.toLowerCase();
  if (lower.includes('nan')) return 0;
  const q = lower.includes('inf') ? (lower.startsWith('-') ? -Infinity : Infinity) : Math.fround(Number(text));
  const scaled = Math.trunc(Math.fround(q * 1000));
  return Math.min(2 ** 31 - 1, Math.max(-(2 ** 31), scaled));
}

export function acceptFormat(accept: string | undefined): AnswerFormat {
  if (accept === undefined) return 'json';
  // The two values SDKs send, without the split (a hot path).
  if (accept === 'application/x-bcs') return 'bcs';
  if (accept === 'application/json') return 'json';
  if (!VISIBLE_ASCII.test(accept)) return 'json';
  let best: { format: AnswerFormat; weight: number } | undefined;
  for (const part of accept.split(',')) {
    const element = part.trim();
    const at = element.indexOf(';q=');
    const type = (at < 0 ? element : element.slice(0, at)).toLowerCase();
    const format = type === 'application/json' ? 'json' : type === 'application/x-bcs' ? 'bcs' : undefined;
    if (format === undefined) continue;
    const weight = at < 0 ? 1000 : weightOf(element.slice(at + 3));
    if (weight !== null && (best === undefined || weight > best.weight)) best = { format, weight };
  }
  return best?.format ?? 'json';
}
