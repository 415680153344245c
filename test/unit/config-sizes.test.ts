// Sizes: a whole number of bytes, or a number with a binary unit (KiB, MiB, GiB),
// in the file and in the environment, for every size key; anything else is a
// config error naming the key.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { formatSize, parseSize } from '../../src/config/sizes.js';
import { thrownBy } from '../helpers/expect.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

const problems = (raw: unknown, env: NodeJS.ProcessEnv = {}): string[] =>
  thrownBy(ConfigError, () => parseConfig(raw, env)).issues.map((issue) => `${issue.path}: ${issue.reason}`);

describe('parseSize', () => {
  it.each([
    ['0', 0],
    ['4096', 4096],
    ['512KiB', 512 * KiB],
    ['256MiB', 256 * MiB],
    ['1GiB', GiB],
    ['1.5GiB', 1.5 * GiB],
    ['0.5KiB', 512],
    ['64 MiB', 64 * MiB],
  ])('%s is %i bytes', (text, bytes) => {
    expect(parseSize(text)).toEqual({ ok: true, bytes });
  });

  it.each([
    ['256MB', /decimal units are not accepted/],
    ['1GB', /decimal units are not accepted/],
    ['1.1KiB', /must come to a whole number of bytes, got "1.1KiB"/],
    ['256mib', /must be a whole number of bytes, or a number with KiB, MiB or GiB/],
    ['1.5', /must be a whole number of bytes/],
    ['-1MiB', /must be a whole number of bytes/],
    ['1e6', /must be a whole number of bytes/],
    ['', /must be a whole number of bytes/],
    ['256 MiB ', /must be a whole number of bytes/],
  ])('refuses %j', (text, reason) => {
    const parsed = parseSize(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });

  it('formats bytes in the largest unit that divides them', () => {
    expect([256 * MiB, 8 * MiB, GiB, 1.5 * GiB, 1536, 1000].map(formatSize)).toEqual([
      '256MiB',
      '8MiB',
      '1GiB',
      '1536MiB',
      '1536',
      '1000',
    ]);
  });
});

describe('every size key', () => {
  const KEYS: Array<[string, string[]]> = [
    ['server.bodyLimitBytes', ['server', 'bodyLimitBytes']],
    ['routing.maxAnswerBytesInFlight', ['routing', 'maxAnswerBytesInFlight']],
    ['cache.memory.maxBytes', ['cache', 'memory', 'maxBytes']],
  ];
  const at = (path: readonly string[], value: unknown): Record<string, unknown> =>
    path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
  const read = (config: ReturnType<typeof parseConfig>, path: readonly string[]): unknown =>
    path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config);

  it.each(KEYS)('%s takes a unit or bytes', (_key, path) => {
    expect(read(parseConfig(at(path, '2MiB')), path)).toBe(2 * MiB);
    expect(read(parseConfig(at(path, 3 * MiB)), path)).toBe(3 * MiB);
    expect(read(parseConfig(at(path, '4194304')), path)).toBe(4 * MiB);
  });

  it.each(KEYS)('%s refuses a bad size, naming the key', (key, path) => {
    expect(problems(at(path, '256MB'))).toEqual([
      `${key}: must be a whole number of bytes, or a number with KiB, MiB or GiB (512KiB, 256MiB, 1.5GiB), got "256MB" (decimal units are not accepted: write KiB, MiB or GiB, which are 1024-based)`,
    ]);
    expect(problems(at(path, true))[0]).toMatch(new RegExp(`^${key}: must be a whole number of bytes.*, got true$`));
    expect(problems(at(path, 2.5))[0]).toMatch(new RegExp(`^${key}: must be .*, got 2.5$`));
    expect(problems(at(path, '0KiB'))).toEqual([`${key}: must be greater than 0`]);
  });

  it('checks the bound on the bytes, whatever the unit', () => {
    expect(parseConfig({ server: { bodyLimitBytes: '64MiB' } }).server.bodyLimitBytes).toBe(64 * MiB);
    expect(parseConfig({ server: { bodyLimitBytes: '0.0625GiB' } }).server.bodyLimitBytes).toBe(64 * MiB);
    expect(problems({ server: { bodyLimitBytes: '65536.5KiB' } })).toEqual([
      'server.bodyLimitBytes: must be at most 64MiB (67108864 bytes)',
    ]);
  });
});

describe('LEDGER_PROXY_MEMORY_MAX_BYTES', () => {
  it('sets cache.memory.maxBytes, with a unit or in bytes', () => {
    expect(parseConfig({}, { LEDGER_PROXY_MEMORY_MAX_BYTES: '512MiB' }).cache.memory.maxBytes).toBe(512 * MiB);
    expect(parseConfig({}, { LEDGER_PROXY_MEMORY_MAX_BYTES: '1048576' }).cache.memory.maxBytes).toBe(MiB);
    const fromFile = { cache: { memory: { maxBytes: '1GiB' } } };
    expect(parseConfig(fromFile, { LEDGER_PROXY_MEMORY_MAX_BYTES: '128MiB' }).cache.memory.maxBytes).toBe(128 * MiB);
  });

  it('names the key and the variable when its value is not a size', () => {
    expect(problems({}, { LEDGER_PROXY_MEMORY_MAX_BYTES: '1GB' })).toEqual([
      'cache.memory.maxBytes: must be a whole number of bytes, or a number with KiB, MiB or GiB (512KiB, 256MiB, 1.5GiB), got "1GB" (decimal units are not accepted: write KiB, MiB or GiB, which are 1024-based) (from LEDGER_PROXY_MEMORY_MAX_BYTES)',
    ]);
  });
});
