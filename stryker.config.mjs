// Mutation testing (`npm run mutate`, docs/development.md): StrykerJS changes the
// files below one small step at a time and runs their tests against each change (a
// mutant). A mutant no test notices is a behaviour nothing pins. Too slow for CI:
// run it before changing one of these files, on that file alone, with one worker:
//
//   npm run mutate -- --mutate src/http/lane/head.ts
//
// The mutants that survive, each explained. A mutant is named by the code it changes
// (line numbers move); "equivalent" means no input can tell it from the code as it is.
//
// src/http/lane/head.ts: 254 of 255 detected (99.6 %)
//   HANDED_OFF_FIELDS, '__proto__' emptied: equivalent. A field of that name is handed
//     off all the same, as one seen before: `name in headers` finds __proto__ (and
//     constructor, toString…) in every object, inherited from Object.prototype. The
//     entry says so where the fields handed off are listed, so that no change to how
//     names already seen are looked up lets it set the headers' prototype.
//
// src/wire/u64.ts: 26 of 34 detected (76.5 %)
//   while (first < text.length - 1 && …): the bound made `true`, `<=` or
//     `text.length + 1`: equivalent. The bound keeps the last digit of a run of zeros;
//     past it the slice is '' and BigInt('') is 0n, the same number as BigInt('0').
//   if (text.length - first > MAX_SIGNIFICANT_DIGITS) return null, made `false`: no
//     answer changes, since more than 20 significant digits are over U64_MAX and the
//     comparison after BigInt refuses them. The guard bounds the work BigInt does on a
//     long run of digits a client sends; no test measures time.
//   BigInt(first === 0 ? text : text.slice(first)): the condition made `true`, `false`
//     or `!==`, and the slice made `text`: equivalent. BigInt reads a leading '+' and
//     leading zeros as the same number; the condition only spares a slice when there
//     are none.
//
// src/cache/key.ts: 42 of 45 detected (93.3 %)
//   routeNameOfKey, `at === 0 ||` made `false ||`: equivalent. at is 0 only when no ':'
//     follows the generation; the vendor's length is then read from the scheme ('lp5',
//     NaN), the search lands on the scheme's own ':', and the name's length finds no
//     ':' after it: undefined all the same.
//   routeNameOfKey, `vendorLengthEnd < 0` and `nameLengthEnd < 0` made `<= 0`:
//     equivalent. Both are indexOf searches from past 'lp5:', never 0.
//
// The lane parser's differential fuzz runs at a fixed seed and size here
// (vitest.mutate.config.ts), so two runs give the same survivors.

// @ts-check
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: ['src/http/lane/head.ts', 'src/wire/u64.ts', 'src/cache/key.ts'],
  coverageAnalysis: 'perTest',
  // The machine is shared: one test process, one mutant at a time.
  concurrency: 1,
  reporters: ['clear-text', 'progress', 'html'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
