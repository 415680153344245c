/** A seeded PRNG (mulberry32): numbers in [0, 1), the same sequence for the same seed. */
export function prng(seed: number): () => number;
