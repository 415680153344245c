// api.md §2: a u64 is a decimal string of digits. Leading zeros, however many, mean
// the same number, as in a node's parse (Rust's u64::from_str): only the digits
// after them count towards u64::MAX.

export const U64_MAX = 18446744073709551615n;
const DIGITS = /^[0-9]+$/;
/** u64::MAX has 20 digits: more significant digits than that are always over it. */
const MAX_SIGNIFICANT_DIGITS = 20;
const ZERO = 48;

/** Parses a u64 string; anything that is not one (sign, dot, empty, overflow) is null. */
export function parseU64(text: string): bigint | null {
  if (!DIGITS.test(text)) return null;
  let first = 0;
  while (first < text.length - 1 && text.charCodeAt(first) === ZERO) first++;
  if (text.length - first > MAX_SIGNIFICANT_DIGITS) return null;
  const value = BigInt(first === 0 ? text : text.slice(first));
  return value <= U64_MAX ? value : null;
}
