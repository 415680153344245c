// A cheap deterministic 32-bit mix (murmur3's finalizer folded over words): the sparse
// model asks it which keys each version writes, thousands of times a page, where a
// SHA-256 would dominate the page's cost. Not a hash anyone relies on: a schedule.

/** 32-bit unsigned mix of the words (each taken as 32 bits). */
export function simMix(...words: number[]): number {
  let h = 0x9e3779b9;
  for (const word of words) {
    h = Math.imul(h ^ word, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** The low and high 32 bits of a u64, as mix words. */
export function simWords(value: bigint): [number, number] {
  return [Number(value & 0xffffffffn), Number((value >> 32n) & 0xffffffffn)];
}
