// `ledger-proxy --check --config FILE` (as `nginx -t`): validates the file and the
// environment, prints the effective config with every secret redacted and exits
// 0, or names each bad key and exits 2, starting nothing either way.
// `--version` prints the version of package.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../helpers/bytes.js';
import { cliConfig, configFile, runCli, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

useCliBuild();

const SECRETS = ['r3dis-pass', 'cluster-pass', 'Bearer key-123'];

const VALID = `
server:
  port: 8085
  drainDelayMs: 3000
cache:
  redis:
    url: redis://app:r3dis-pass@redis.internal:6379/0
upstreams:
  - url: https://node-provider.example/tenant-7/v1
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
    // Userinfo and query values hidden; the origin and path shown, so the operator sees which server it is.
    expect(printed.cache.redis.url).toBe('redis://<redacted>:<redacted>@redis.internal:6379/0');
    expect(printed.upstreams[0]).toMatchObject({
      name: 'hosted',
      url: 'https://node-provider.example/tenant-7',
      headers: { authorization: '<redacted>' },
    });
    expect(printed.upstreams[1].url).toBe('https://fullnode.example');
  });

  it('fills in every default, tenants.costs too, names the keys left unset, and prints a config that loads the same', async () => {
    const file = configFile(
      'check-defaults.yaml',
      'tenants:\n  list:\n    - name: a\ncache:\n  memory:\n    maxBytes: 64MiB\n',
    );
    const { code, stdout } = await runCli(['--check', '--config', file]);
    expect(code).toBe(0);
    const printed = parse(stdout);
    expect(printed.cache.memory.maxBytes).toBe(64 * 1024 * 1024);
    expect(printed.tenants).toMatchObject({
      anonymous: { priority: 'low' },
      list: [{ name: 'a', keys: [], priority: 'normal' }],
      costs: { raw_item: 1, view: 5, blocks: 2, 'POST /v1/transactions/simulate': 20 },
    });
    const unset = /^# Unset, .*\n((?:# {3}.*\n)+)/m.exec(stdout)?.[1]?.replaceAll(/#\s+/g, '') ?? '';
    expect(unset.split(/,\s*/).map((key) => key.trim())).toEqual(
      expect.arrayContaining([
        'admin.token',
        'chainId',
        'cache.redis',
        'tenants.trustedHeader',
        'tenants.list.0.origins',
      ]),
    );
    expect(unset).not.toMatch(/\btenants,/);
    // The printed config is a config: checked again, it prints itself.
    const again = await runCli(['--check', '--config', configFile('check-printed.yaml', stdout)]);
    expect(again.code).toBe(0);
    expect(again.stdout.replace(/^# .*?: valid/, '')).toBe(stdout.replace(/^# .*?: valid/, ''));
  });

  it('redacts a Redis Cluster URL password too', async () => {
    const file = configFile(
      'check-cluster.yaml',
      'cache:\n  redis:\n    cluster: ["redis://:cluster-pass@a:7000", "redis://b:7001"]\n',
    );
    const { code, stdout } = await runCli(['--check', '--config', file]);
    expect(code).toBe(0);
    expect(parse(stdout).cache.redis.cluster).toEqual(['redis://:<redacted>@a:7000', 'redis://b:7001']);
  });

  it('names each bad key and exits 2', async () => {
    const file = configFile(
      'check-bad.yaml',
      'server:\n  workers: many\n  drainDelayMs: -5\ncache:\n  memory: { maxBytes: 0 }\nbogus: 1\n',
    );
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

/** A config with tenants `list` (and `more` keys of tenants, of server); refused, it starts nothing. */
const withTenants = (list: string, more = '', server = 'port: 1'): string =>
  `server: { ${server} }\nadmin: { port: 0 }\nupstreams: [{ url: "http://127.0.0.1:9" }]\ntenants:\n  ${more}list:\n${list}`;
const PASTED_KEY = 'pasted-plain-key-42';

describe('what a start refuses, --check refuses, by key and without a stack', () => {
  const CASES: Array<[string, string, string, Record<string, string>?]> = [
    [
      'a key read from an unset environment variable',
      withTenants('    - name: a\n      keys: [{ env: LP_TEST_UNSET_KEY }]\n'),
      'tenants.list.0.keys.0.env: the environment variable LP_TEST_UNSET_KEY is not set',
    ],
    [
      'one key listed for two tenants',
      withTenants(
        `    - name: a\n      keys: [{ env: LP_TEST_KEY }]\n    - name: b\n      keys: [{ sha256: "${sha256Hex('shared-key')}" }]\n`,
      ),
      'tenants.list.1.keys.0: the same key as tenants.list.0.keys.0 (tenant a)',
      { LP_TEST_KEY: 'shared-key' },
    ],
    [
      'a hop count with a trusted tenant header',
      withTenants('    - name: a\n', 'trustedHeader: X-Tenant\n  ', 'port: 1, trustProxy: 1'),
      'tenants.trustedHeader: needs server.trustProxy to list',
    ],
    [
      'a key pasted where its sha256 belongs',
      withTenants(`    - name: a\n      keys: [{ sha256: "${PASTED_KEY}" }]\n`),
      'tenants.list.0.keys.0.sha256: must match',
    ],
  ];

  it.each(CASES)('%s: --check exits 2 naming the key, and so does a start', async (_name, text, line, env = {}) => {
    const file = configFile('check-start.yaml', text);
    for (const args of [
      ['--check', '--config', file],
      ['--config', file],
    ]) {
      const { code, stdout, stderr } = await runCli(args, env);
      expect(code, `${args.join(' ')}:\n${stderr}`).toBe(2);
      expect(stdout, args[0]).toBe('');
      expect(stderr, args[0]).toContain(`Invalid configuration in ${file}`);
      expect(stderr, args[0]).toContain(line);
      expect(stderr, args[0]).not.toMatch(/^\s+at /m);
      expect(stderr, args[0]).not.toContain(PASTED_KEY);
      if (line.startsWith('tenants.trustedHeader')) expect(stderr).toContain('server.trustProxy');
    }
  });

  it('a key the environment holds passes --check', async () => {
    const file = configFile('check-env-key.yaml', withTenants('    - name: a\n      keys: [{ env: LP_TEST_KEY }]\n'));
    const { code, stdout } = await runCli(['--check', '--config', file], { LP_TEST_KEY: 'a-key' });
    expect(code).toBe(0);
    expect(stdout).not.toContain('a-key');
  });

  it('a SIGHUP that meets a bad key keeps the running config and logs the key path, never the value', async () => {
    const port = await freePort();
    const node = await sim();
    const file = configFile('reload-bad-key.yaml', cliConfig(port, node));
    const cli = await startCli(file, port);
    writeFileSync(file, cliConfig(port, node, { tenants: { list: [{ name: 'a', keys: [{ sha256: PASTED_KEY }] }] } }));
    cli.child.kill('SIGHUP');
    await until(
      () => cli.output().includes('config not reloaded'),
      5000,
      () => `the reload's log line:\n${cli.output()}`,
    );
    expect(cli.output()).toContain('tenants.list.0.keys.0.sha256');
    expect(cli.output()).not.toContain(PASTED_KEY);
    expect(cli.child.exitCode).toBeNull();
  });
});

describe('ledger-proxy --version', () => {
  it('prints the version of package.json and exits 0', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toEqual({ code: 0, stdout: `ledger-proxy ${version}\n`, stderr: '' });
  });
});
