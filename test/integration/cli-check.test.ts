// `ledger-proxy --check --config FILE` (as `nginx -t`): validates the file and the
// environment, prints the effective config with every secret redacted and exits
// 0, or names each bad key and exits 2, starting nothing either way.
// `--version` prints the version of package.json.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configFile, runCli, useCliBuild } from '../helpers/cli.js';

useCliBuild();

const SECRETS = ['r3dis-pass', 'cluster-pass', 'Bearer key-123', 'tenant-7-key'];

const VALID = `
server:
  port: 8085
  drainDelayMs: 3000
cache:
  redis:
    url: redis://app:r3dis-pass@redis.internal:6379/0
upstreams:
  - url: https://node-provider.example/tenant-7-key/v1
    name: hosted
    headers: { Authorization: "Bearer key-123" }
  - url: https://fullnode.example/v1
`;

describe('ledger-proxy --check', () => {
  it('prints the effective config (env applied, defaults filled in) with secrets redacted, and exits 0', async () => {
    const file = configFile('check-valid.yaml', VALID);
    const { code, stdout, stderr } = await runCli(['--check', '--config', file], { LEDGER_PROXY_LOG_LEVEL: 'warn' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const secret of SECRETS) expect(stdout).not.toContain(secret);
    const printed = parse(stdout);
    expect(printed.server).toMatchObject({ port: 8085, drainDelayMs: 3000, shutdownTimeoutMs: 10000, workers: 1 });
    expect(printed.log.level).toBe('warn');
    expect(printed.cache.redis.url).toBe('redis://app:<redacted>@redis.internal:6379/0');
    expect(printed.upstreams[0]).toMatchObject({
      name: 'hosted',
      url: 'https://node-provider.example/<redacted>',
      headers: { authorization: '<redacted>' },
    });
    expect(printed.upstreams[1].url).toBe('https://fullnode.example');
  });

  it('redacts a Redis Cluster URL password too', async () => {
    const file = configFile('check-cluster.yaml', 'cache:\n  redis:\n    cluster: ["redis://:cluster-pass@a:7000", "redis://b:7001"]\n');
    const { code, stdout } = await runCli(['--check', '--config', file]);
    expect(code).toBe(0);
    expect(parse(stdout).cache.redis.cluster).toEqual(['redis://:<redacted>@a:7000', 'redis://b:7001']);
  });

  it('names each bad key and exits 2', async () => {
    const file = configFile('check-bad.yaml', 'server:\n  workers: many\n  drainDelayMs: -5\ncache:\n  memory: { maxBytes: 0 }\nbogus: 1\n');
    const { code, stdout, stderr } = await runCli(['--check', '--config', file]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`Invalid configuration in ${file}`);
    expect(stderr).toContain('server.workers: must be "auto" or a whole number from 1 to 256, got "many"');
    expect(stderr).toContain('server.drainDelayMs: must be at least 0');
    expect(stderr).toContain('cache.memory.maxBytes: must be greater than 0');
    expect(stderr).toContain('bogus: unknown key');
  });

  it('names a bad env override and exits 2', async () => {
    const { code, stderr } = await runCli(['--check'], { LEDGER_PROXY_PORT: 'eighty' });
    expect(code).toBe(2);
    expect(stderr).toContain('LEDGER_PROXY_PORT: must be a whole number, got "eighty"');
  });
});

describe('ledger-proxy --version', () => {
  it('prints the version of package.json and exits 0', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `ledger-proxy ${version}\n`, stderr: '' });
  });
});
