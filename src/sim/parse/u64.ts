// A u64 as the sim reads it. The sim follows the API contract (docs/api.md §2)
// here: one or more ASCII digits, at most u64::MAX; leading zeros are digits like
// any other. A sign ('+' or '-'), whitespace, a dot or an exponent make it no u64.

export const SIM_U64_MAX = (1n << 64n) - 1n;

const DIGITS = /^[0-9]+$/;

/** The value of a u64, or null when the text is no u64 under the contract. */
export function parseNodeU64(text: string): bigint | null {
  if (!DIGITS.test(text)) return null;
  const value = BigInt(text);
  return value <= SIM_U64_MAX ? value : null;
}
