// The suites `npm run mutate` (stryker.config.mjs) runs against each mutant: the
// unit tests that pin the mutated files, and the lane parser's differential
// fuzz at a fixed seed and a smaller size, so a run gives the same score twice.
// No global setup: nothing here starts the CLI.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/unit/lane-head.test.ts',
      'test/fuzz/lane-parser.test.ts',
      'test/unit/wire.test.ts',
      'test/unit/cache-key.test.ts',
    ],
    env: { FUZZ_SEED: '1', FUZZ_LANE_RUNS: '2000' },
    pool: 'forks',
    maxWorkers: 1,
  },
});
