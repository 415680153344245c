// A node's u64 (the API's U64 type is Rust's u64::from_str): an optional '+', then
// one or more ASCII digits, at most u64::MAX. Leading zeros are digits like any
// other; whitespace, a '-', a dot or an exponent make it no u64.

export const SIM_U64_MAX = (1n << 64n) - 1n;

/** The value of a u64 as a node parses it, or null when the node refuses the text. */
export function parseNodeU64(text: string): bigint | null {
  const digits = text.startsWith('+') ? text.slice(1) : text;
  if (digits.length === 0) return null;
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const value = BigInt(digits);
  return value <= SIM_U64_MAX ? value : null;
}
