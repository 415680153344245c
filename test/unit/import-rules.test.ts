// The import rules (.dependency-cruiser.cjs, run by `npm run lint`) catch what
// they forbid: a copy of src/ with one violation of each kind planted in it is
// cruised with the repo's config, and exactly the planted violations are
// reported, so the rest of the copy, today's src/, keeps every rule.
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/** Files written into the copy (path under src/ → text), and the violations each must bring: "rule: from → to". */
const PLANTED: Array<{ file: string; text: string; expected: string[] }> = [
  {
    // Type-only, so the rule is shown to count imports that vanish from the build.
    file: 'wire/up.ts',
    text: "import type { ReadThrough } from '../serve/read-through.js';\nexport type Up = ReadThrough;\n",
    expected: ['not-up-from-wire: src/wire/up.ts → src/serve/read-through.ts'],
  },
  {
    // A circle is reported once, at its first file.
    file: 'wire/circle-a.ts',
    text: "import { b } from './circle-b.js';\nexport const a = (): number => b() + 1;\n",
    expected: ['no-circular: src/wire/circle-a.ts → src/wire/circle-b.ts'],
  },
  {
    // Closed by a type-only import: it is a circle all the same.
    file: 'wire/circle-b.ts',
    text: "import type { a } from './circle-a.js';\nexport type A = typeof a;\nexport const b = (): number => 0;\n",
    expected: [],
  },
  {
    file: 'serve/direct-call.ts',
    text: "import { request } from 'undici';\nexport const call = request;\n",
    expected: ['undici-in-the-transport: src/serve/direct-call.ts → node_modules/undici/index.js'],
  },
  {
    file: 'serve/redis-door.ts',
    text: "export { RedisStore } from '../cache/redis/store.js';\n",
    expected: ['serve-knows-the-store-interface: src/serve/redis-door.ts → src/cache/redis/store.ts'],
  },
  {
    file: 'http/sim-door.ts',
    text: "export * from '../sim/index.js';\n",
    expected: ['sim-through-the-seam: src/http/sim-door.ts → src/sim/index.ts'],
  },
  {
    // The seam itself, importing the sim statically.
    file: 'wiring/sim.ts',
    text: "export * from '../sim/index.js';\n",
    expected: ['seam-loads-the-sim-lazily: src/wiring/sim.ts → src/sim/index.ts'],
  },
  {
    // The oracle parsing with the proxy's canonicalisation: a bug there would hide in both.
    file: 'sim/handlers/wire-door.ts',
    text: "export { parseAddress } from '../../wire/address.js';\n",
    expected: ['sim-parses-its-own-input: src/sim/handlers/wire-door.ts → src/wire/address.ts'],
  },
  {
    // The sim writing its pages with the reader it is to check.
    file: 'sim/state/feed-door.ts',
    text: "export { decodeTransactionPage } from '../../writes/page.js';\n",
    expected: ['sim-encodes-its-own-feed: src/sim/state/feed-door.ts → src/writes/page.ts'],
  },
  {
    file: 'sim/parse/up.ts',
    text: "export { SimError } from '../node-error.js';\n",
    expected: ['sim-parsers-stand-alone: src/sim/parse/up.ts → src/sim/node-error.ts'],
  },
  {
    // A folder of the sim that SIM_ROOMS does not list.
    file: 'sim/loose/x.ts',
    text: "export { parseNodeU64 } from '../parse/u64.js';\n",
    expected: ['in-a-room: src/sim/loose/x.ts → src/sim/parse/u64.ts'],
  },
  {
    file: 'edge/redis-counters.ts',
    text: "import type { Redis } from 'ioredis';\nexport type Counters = Redis;\n",
    expected: ['ioredis-in-the-redis-tier: src/edge/redis-counters.ts → node_modules/ioredis/built/index.js'],
  },
  {
    file: 'wiring/tracing-now.ts',
    text: "export { startTracing } from '../tracing/sdk.js';\n",
    expected: ['tracing-sdk-loaded-lazily: src/wiring/tracing-now.ts → src/tracing/sdk.ts'],
  },
  {
    file: 'wire/dev-only.ts',
    text: "import fc from 'fast-check';\nexport const arbitrary = fc.nat();\n",
    expected: ['not-to-dev-dep: src/wire/dev-only.ts → node_modules/fast-check/lib/fast-check.js'],
  },
  {
    file: 'wire/test-door.ts',
    text: "export { until } from '../../test/helpers/until.js';\n",
    expected: ['not-to-test-or-bench: src/wire/test-door.ts → test/helpers/until.ts'],
  },
  {
    // A file in no room: the floors cannot judge it, from or to.
    file: 'loose.ts',
    text: "export { hexToBytes } from './wire/hex.js';\n",
    expected: ['in-a-room: src/loose.ts → src/wire/hex.ts'],
  },
  {
    file: 'wire/into-loose.ts',
    text: "export * from '../loose.js';\n",
    expected: ['into-a-room: src/wire/into-loose.ts → src/loose.ts'],
  },
  {
    file: 'wire/orphan.ts',
    text: 'export const orphan = 1;\n',
    expected: ['no-orphans: src/wire/orphan.ts → src/wire/orphan.ts'],
  },
];

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

/** The copy of src/ and of the config and tsconfig the cruise reads, under .test-build/ (so packages resolve). */
function plantedCopy(): string {
  mkdirSync(join(ROOT, '.test-build'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.test-build', 'import-rules-'));
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'])
    copyFileSync(join(ROOT, file), join(dir, file));
  for (const { file, text } of PLANTED) {
    mkdirSync(dirname(join(dir, 'src', file)), { recursive: true });
    writeFileSync(join(dir, 'src', file), text);
  }
  mkdirSync(join(dir, 'test', 'helpers'), { recursive: true });
  writeFileSync(join(dir, 'test', 'helpers', 'until.ts'), 'export const until = 1;\n');
  return dir;
}

/** The violations depcruise reports as errors. */
async function cruise(dir: string): Promise<string[]> {
  const args = [DEPCRUISE, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch(
    // depcruise exits with the number of errors it found; its report is on stdout all the same.
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
  );
  const violations = (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
  return (
    violations
      .filter((v) => v.rule.severity === 'error')
      // A package's path says where node_modules is from the copy: up in the repo.
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^(\.\.\/)+node_modules\//, 'node_modules/')}`)
      .sort()
  );
}

describe('import rules', () => {
  const dir = plantedCopy();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports each planted violation, and nothing else in src/', async () => {
    const expected = PLANTED.flatMap((p) => p.expected).sort();
    expect(await cruise(dir)).toEqual(expected);
  }, 180_000);
});
