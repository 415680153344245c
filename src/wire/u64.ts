// api.md §2: a u64 as a node reads it (Rust's u64::from_str): an optional '+',
// then decimal digits. Leading zeros, however many, mean the same number: only
// the digits after them count towards u64::MAX. What a node writes (its headers,
// its answers) is digits alone, and is read as such.

export const U64_MAX = 18446744073709551615n;
const WITH_SIGN = /^\+?[0-9]+$/;
const DIGITS = /^[0-9]+$/;
/** u64::MAX has 20 digits: more significant digits than that are always over it. */
const MAX_SIGNIFICANT_DIGITS = 20;
const ZERO = 48;
const PLUS = 43;

/** A u64 a client sent, as a node parses it; anything that is not one (a '-', dot, space, empty, overflow) is null. */
export function parseU64(text: string): bigint | null {
  return WITH_SIGN.test(text) ? digitsValue(text, text.charCodeAt(0) === PLUS ? 1 : 0) : null;
}

/** A u64 a node wrote: digits only (no sign); null otherwise. */
export function parseU64Digits(text: string): bigint | null {
  return DIGITS.test(text) ? digitsValue(text, 0) : null;
}

/** The value of the digits of `text` from `first`, or null above u64::MAX. */
function digitsValue(text: string, first: number): bigint | null {
  let at = first;
  while (at < text.length - 1 && text.charCodeAt(at) === ZERO) at++;
  if (text.length - at > MAX_SIGNIFICANT_DIGITS) return null;
  const value = BigInt(at === 0 ? text : text.slice(at));
  return value <= U64_MAX ? value : null;
}
