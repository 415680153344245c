import { describe, expect, it } from 'vitest';
import { CliError, parseCli, USAGE } from '../../src/config/index.js';

describe('parseCli', () => {
  it.each([
    [[], { help: false }],
    [['--config', 'a.yaml'], { configFile: 'a.yaml', help: false }],
    [['-c', 'a.yaml'], { configFile: 'a.yaml', help: false }],
    [['--config=a.yaml'], { configFile: 'a.yaml', help: false }],
    [['--config=-odd.yaml'], { configFile: '-odd.yaml', help: false }],
    [['--help'], { help: true }],
    [['-h', '-c', 'a.yaml'], { configFile: 'a.yaml', help: true }],
  ])('%j', (argv, expected) => {
    expect(parseCli(argv)).toEqual(expected);
  });

  it.each([
    [['--bogus'], "unknown option '--bogus'"],
    [['-x'], "unknown option '-x'"],
    [['a.yaml'], "unexpected argument 'a.yaml'"],
    [['--config'], '--config needs a file name'],
    [['--config', '--help'], '--config needs a file name'],
    [['--config='], '--config needs a file name'],
    [['-c', 'a', '-c', 'b'], '-c given more than once'],
    [['--help=yes'], '--help takes no value'],
  ])('%j fails: %s', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(new CliError(message));
    expect(() => parseCli(argv)).toThrow(/\(see --help\)$/);
  });

  it('USAGE names the flags and the env overrides', () => {
    expect(USAGE).toContain('--config FILE');
    expect(USAGE).toContain('--help');
    expect(USAGE).toMatch(/LEDGER_PROXY_UPSTREAMS\s+upstreams/);
  });
});
