// A u64 as the sim reads it. The sim follows the API contract (docs/api.md §2)
// here, which is Rust's u64::from_str: one or more ASCII digits after an optional
// '+', at most u64::MAX; leading zeros are digits like any other. A '+' alone, a
// '-', a second sign, whitespace, a dot or an exponent make it no u64.

export const SIM_U64_MAX = (1n << 64n) - 1n;

const UNSIGNED = /^\+?([0-9]+)$/;

/** The value of a u64, or null when the text is no u64 under the contract. */
export function parseNodeU64(text: string): bigint | null {
  const digits = UNSIGNED.exec(text)?.[1];
  if (digits === undefined) return null;
  const value = BigInt(digits);
  return value <= SIM_U64_MAX ? value : null;
}
