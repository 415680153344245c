// SPEC §2: a u64 is a decimal string of digits, leading zeros allowed.

export const U64_MAX = 18446744073709551615n;
const DIGITS = /^[0-9]{1,64}$/;

/** Parses a u64 string; anything that is not one (sign, dot, empty, overflow) is null. */
export function parseU64(text: string): bigint | null {
  if (!DIGITS.test(text)) return null;
  const value = BigInt(text);
  return value <= U64_MAX ? value : null;
}
