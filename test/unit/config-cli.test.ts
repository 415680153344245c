import { describe, expect, it } from 'vitest';
import { CliError, parseCli, USAGE } from '../../src/config/index.js';

const NONE = { help: false, version: false, check: false };

describe('parseCli', () => {
  it.each([
    [[], { ...NONE }],
    [['--config', 'a.yaml'], { ...NONE, configFile: 'a.yaml' }],
    [['-c', 'a.yaml'], { ...NONE, configFile: 'a.yaml' }],
    [['--config=a.yaml'], { ...NONE, configFile: 'a.yaml' }],
    [['--config=-odd.yaml'], { ...NONE, configFile: '-odd.yaml' }],
    [['--help'], { ...NONE, help: true }],
    [['-h', '-c', 'a.yaml'], { ...NONE, configFile: 'a.yaml', help: true }],
    [['--check', '--config', 'a.yaml'], { ...NONE, configFile: 'a.yaml', check: true }],
    [['--version'], { ...NONE, version: true }],
    [['-v'], { ...NONE, version: true }],
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
    [['--check=yes'], '--check takes no value'],
    [['--version=1'], '--version takes no value'],
  ])('%j fails: %s', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(new CliError(message));
    expect(() => parseCli(argv)).toThrow(/\(see --help\)$/);
  });

  it('USAGE names the flags and the env overrides', () => {
    expect(USAGE).toContain('--config FILE');
    expect(USAGE).toContain('--help');
    expect(USAGE).toContain('--check');
    expect(USAGE).toContain('--version');
    expect(USAGE).toMatch(/LEDGER_PROXY_UPSTREAMS\s+upstreams/);
    expect(USAGE).toMatch(/LEDGER_PROXY_OTLP_ENDPOINT\s+tracing\.otlpEndpoint/);
  });
});
