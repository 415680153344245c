// api.md §2: a u64 is a decimal string of digits, read as a node reads it (Rust's
// u64::from_str): one leading '+' may come first, and leading zeros, however many,
// mean the same number; only the digits after them count towards u64::MAX. A '+'
// alone, a '-' (even before 0) or a second sign make it no u64.

export const U64_MAX = 18446744073709551615n;
const DIGITS = /^\+?[0-9]+$/;
/** u64::MAX has 20 digits: more significant digits than that are always over it. */
const MAX_SIGNIFICANT_DIGITS = 20;
const ZERO = 48;
const PLUS = 43;

/** Parses a u64 string; anything that is not one (a '-', a dot, empty, overflow) is null. */
export function parseU64(text: string): bigint | null {
  if (!DIGITS.test(text)) return null;
  let first = text.charCodeAt(0) === PLUS ? 1 : 0;
  while (first < text.length - 1 && text.charCodeAt(first) === ZERO) first++;
  if (text.length - first > MAX_SIGNIFICANT_DIGITS) return null;
  const value = BigInt(first === 0 ? text : text.slice(first));
  return value <= U64_MAX ? value : null;
}
