// A small seeded PRNG (mulberry32), so a workload or a test's request mix is the
// same sequence every run and a failure can be replayed from its seed. Shared by
// the bench (plain JS) and the tests (typed by prng.d.mts).
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
