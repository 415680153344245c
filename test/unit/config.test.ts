import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig, type Config, type RedisConfig } from '../../src/config/index.js';
import { sha256Hex } from '../helpers/bytes.js';
import { thrownBy } from '../helpers/expect.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-proxy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function yamlFile(text: string): string {
  const file = join(dir, `config-${fileCount++}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** The issue lines of the ConfigError `fn` throws. */
function problems(fn: () => unknown): string[] {
  return thrownBy(ConfigError, fn).issues.map((issue) => `${issue.path}: ${issue.reason}`);
}

const fail = (raw: unknown, env: NodeJS.ProcessEnv = {}): string[] => problems(() => parseConfig(raw, env));

describe('defaults', () => {
  it('an empty object gives every default', () => {
    expect(parseConfig({})).toEqual({
      server: {
        host: '127.0.0.1',
        port: 8080,
        bodyLimitBytes: 8388608,
        trustProxy: false,
        trustRequestId: true,
        requestTimeoutMs: 30000,
        shutdownTimeoutMs: 10000,
        drainDelayMs: 0,
        lane: true,
        workers: 1,
      },
      admin: { host: '127.0.0.1', port: 9090, allowedHosts: [] },
      vendor: 'auto',
      upstreams: [{ url: 'sim', name: 'sim', weight: 1, role: 'normal', headers: {}, spreadVersions: 0 }],
      routing: {
        attemptTimeoutMs: 5000,
        deadlineMs: 10000,
        maxAttempts: 3,
        probeIntervalMs: 1000,
        maxLagVersions: 1000,
        maxAnswerBytesInFlight: 268435456,
        hedgeAfterMs: 0,
        breaker: { failureThreshold: 5, openMs: 5000 },
      },
      cache: { memory: { maxBytes: 268435456 }, verify: { mode: 'off', sampleRatio: 0.1 } },
      passthrough: true,
      cors: { enabled: true, origins: '*', maxAgeSeconds: 86400 },
      latest: {
        maxStalenessMs: 0,
        maxStalenessVersions: 0,
        staleIfErrorMs: 0,
        changeFeed: {
          enabled: false,
          pageSize: 100,
          intervalMs: 0,
          waitMs: 50,
          maxLagVersions: 10_000,
          windowVersions: 2_000,
          maxWatchedKeys: 100_000,
        },
      },
      shedding: { maxInFlight: 10000, budgetWaitMs: 50, shedFirst: 'none' },
      log: { level: 'info', format: 'auto' },
      tracing: { sampleRatio: 0.01, serviceName: 'ledger-proxy', followClientSampling: true },
      sim: {
        port: 8081,
        host: '127.0.0.1',
        versionsPerSecond: 2,
        pruneWindow: 1000000,
        chainId: 4,
        writes: {
          model: 'period',
          writeRate: 0.02,
          hotShare: 0.05,
          hotEvery: 8,
          accounts: 36,
          objects: 12,
          tables: 4,
          tableKeys: 32,
        },
      },
    });
  });

  it('has no chainId and no redis unless configured', () => {
    const config = parseConfig({});
    expect('chainId' in config).toBe(false);
    expect(config.cache.redis).toBeUndefined();
  });

  it('fills defaults inside a partly given section', () => {
    const config = parseConfig({ routing: { breaker: { openMs: 1 } }, cache: { redis: { url: 'redis://h:1' } } });
    expect(config.routing.breaker).toEqual({ failureThreshold: 5, openMs: 1 });
    expect(config.routing.maxAttempts).toBe(3);
    expect(config.cache.redis).toEqual({
      url: 'redis://h:1',
      keyPrefix: 'ledger-proxy:',
      maxTtlSeconds: 604800,
      commandTimeoutMs: 200,
      fillLock: true,
      fillLockMs: 2000,
    });
  });

  it('treats undefined and null (an empty YAML key) as absent', () => {
    expect(parseConfig(undefined)).toEqual(parseConfig({}));
    expect(parseConfig({ cache: { redis: null }, chainId: null, server: null })).toEqual(parseConfig({}));
  });

  it('has the documented types', () => {
    expectTypeOf<Config['server']['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['chainId']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Config['upstreams'][number]['name']>().toEqualTypeOf<string>();
    expectTypeOf<Config['upstreams'][number]['role']>().toEqualTypeOf<'normal' | 'archive'>();
    expectTypeOf<Config['log']['level']>().toEqualTypeOf<
      'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
    >();
    expectTypeOf<RedisConfig['keyPrefix']>().toEqualTypeOf<string>();
    const redis = {} as RedisConfig;
    if (redis.url === undefined) expectTypeOf(redis.cluster).toEqualTypeOf<readonly string[]>();
  });
});

describe('env overrides', () => {
  it('applies each variable', () => {
    const config = parseConfig(
      { upstreams: [{ url: 'http://a:1', name: 'a' }], cache: { redis: { cluster: ['redis://c:1'] } } },
      {
        LEDGER_PROXY_HOST: '0.0.0.0',
        LEDGER_PROXY_PORT: '8000',
        LEDGER_PROXY_ADMIN_PORT: '0',
        LEDGER_PROXY_VENDOR: 'aptos',
        LEDGER_PROXY_UPSTREAMS: 'http://n1:8080/v1, https://n2',
        LEDGER_PROXY_REDIS_URL: 'redis://r:6380',
        LEDGER_PROXY_LOG_LEVEL: 'debug',
      },
    );
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.port).toBe(8000);
    expect(config.admin.port).toBe(0);
    expect(config.vendor).toBe('aptos');
    expect(config.upstreams.map((u) => [u.url, u.name])).toEqual([
      ['http://n1:8080', 'node1'],
      ['https://n2', 'node2'],
    ]);
    expect(config.cache.redis?.url).toBe('redis://r:6380');
    expect(config.cache.redis?.cluster).toBeUndefined();
    expect(config.log.level).toBe('debug');
  });

  it('creates the redis section when the file has none', () => {
    expect(parseConfig({}, { LEDGER_PROXY_REDIS_URL: 'redis://r:1' }).cache.redis?.url).toBe('redis://r:1');
  });

  it('ignores empty variables', () => {
    expect(parseConfig({}, { LEDGER_PROXY_PORT: '', LEDGER_PROXY_UPSTREAMS: '' })).toEqual(parseConfig({}));
  });

  it('does not change the raw object it was given', () => {
    const raw = { server: { port: 1 } };
    parseConfig(raw, { LEDGER_PROXY_PORT: '2' });
    expect(raw).toEqual({ server: { port: 1 } });
  });

  it('parses numbers strictly and names the variable', () => {
    for (const bad of ['abc', '80.5', '-1', ' 80', '0x50', '8e3']) {
      expect(fail({}, { LEDGER_PROXY_PORT: bad })).toEqual([
        `LEDGER_PROXY_PORT: must be a whole number, got ${JSON.stringify(bad)}`,
      ]);
    }
    expect(fail({}, { LEDGER_PROXY_ADMIN_PORT: 'x' })[0]).toMatch(/^LEDGER_PROXY_ADMIN_PORT: /);
  });

  it('names the variable when its value fails validation', () => {
    expect(fail({}, { LEDGER_PROXY_PORT: '70000' })).toEqual([
      'server.port: must be at most 65535 (from LEDGER_PROXY_PORT)',
    ]);
    expect(fail({}, { LEDGER_PROXY_UPSTREAMS: 'ftp://x' })).toEqual([
      "upstreams.0.url: must be 'sim' or an http(s) URL (from LEDGER_PROXY_UPSTREAMS)",
    ]);
    expect(fail({}, { LEDGER_PROXY_UPSTREAMS: 'http://a,,http://b' })[0]).toMatch(/^LEDGER_PROXY_UPSTREAMS: .*empty/);
    expect(fail({}, { LEDGER_PROXY_LOG_LEVEL: 'loud' })[0]).toMatch(
      /^log\.level: must be one of .*\(from LEDGER_PROXY_LOG_LEVEL\)$/,
    );
  });

  it('loadConfig reads process.env unless given env', () => {
    const before = process.env.LEDGER_PROXY_VENDOR;
    process.env.LEDGER_PROXY_VENDOR = 'fromprocess';
    try {
      expect(loadConfig().vendor).toBe('fromprocess');
      expect(loadConfig({ env: {} }).vendor).toBe('auto');
    } finally {
      if (before === undefined) delete process.env.LEDGER_PROXY_VENDOR;
      else process.env.LEDGER_PROXY_VENDOR = before;
    }
  });
});

describe('YAML files', () => {
  it('reads a file and applies env on top', () => {
    const file = yamlFile('server:\n  port: 1234\nvendor: aptos\nupstreams:\n  - url: http://10.0.0.1:8080/v1/\n');
    const config = loadConfig({ file, env: { LEDGER_PROXY_HOST: '::' } });
    expect(config.server).toMatchObject({ host: '::', port: 1234 });
    expect(config.vendor).toBe('aptos');
    expect(config.upstreams[0]).toMatchObject({ url: 'http://10.0.0.1:8080', name: 'node1' });
  });

  it('an empty or comment-only file is all defaults', () => {
    expect(loadConfig({ file: yamlFile(''), env: {} })).toEqual(parseConfig({}));
    expect(loadConfig({ file: yamlFile('# nothing\n'), env: {} })).toEqual(parseConfig({}));
  });

  it('reports YAML syntax errors with file and line', () => {
    const file = yamlFile('server:\n  port: 1\n  port: 2\n');
    const lines = problems(() => loadConfig({ file, env: {} }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${file.replace(/[.\\]/g, '\\$&')}:3:3: Map keys must be unique$`));
  });

  it('names the file in validation errors', () => {
    const file = yamlFile('server:\n  prot: 1\n');
    expect(() => loadConfig({ file, env: {} })).toThrow(
      `Invalid configuration in ${file}:\n  server.prot: unknown key`,
    );
  });

  it('reports a missing file', () => {
    expect(problems(() => loadConfig({ file: join(dir, 'missing.yaml'), env: {} }))[0]).toMatch(
      /missing\.yaml: cannot read: .*ENOENT/,
    );
  });

  it('YAML 1.2: yes/no are strings, not booleans', () => {
    expect(problems(() => loadConfig({ file: yamlFile('passthrough: yes\n'), env: {} }))).toEqual([
      'passthrough: must be a boolean, got "yes"',
    ]);
  });
});

describe('unknown keys', () => {
  it('fail with their path at every depth, all reported at once', () => {
    expect(
      fail({
        bogus: 1,
        server: { bogus: 1 },
        upstreams: [{ url: 'sim', bogus: 1 }],
        routing: { breaker: { bogus: 1 } },
        cache: { memory: { bogus: 1 }, redis: { url: 'redis://h:1', bogus: 1 }, disk: {} },
      }),
    ).toEqual([
      'server.bogus: unknown key',
      'upstreams.0.bogus: unknown key',
      'routing.breaker.bogus: unknown key',
      'cache.memory.bogus: unknown key',
      'cache.redis.bogus: unknown key',
      'cache.disk: unknown key',
      'bogus: unknown key',
    ]);
  });
});

describe('bad values', () => {
  it.each([
    [{ server: { port: 65536 } }, 'server.port: must be at most 65535'],
    [{ server: { port: -1 } }, 'server.port: must be at least 0'],
    [{ server: { port: '8080' } }, 'server.port: must be a number, got "8080"'],
    [{ server: { host: '' } }, 'server.host: must not be empty'],
    [{ server: { bodyLimitBytes: 0 } }, 'server.bodyLimitBytes: must be greater than 0'],
    [
      { server: { bodyLimitBytes: 64 * 1024 * 1024 + 1 } },
      'server.bodyLimitBytes: must be at most 64MiB (67108864 bytes)',
    ],
    [{ server: 5 }, 'server: must be a mapping, got 5'],
    [{ server: { workers: 0 } }, 'server.workers: must be "auto" or a whole number from 1 to 256, got 0'],
    [{ server: { workers: 'many' } }, 'server.workers: must be "auto" or a whole number from 1 to 256, got "many"'],
    [{ server: { workers: 2.5 } }, 'server.workers: must be "auto" or a whole number from 1 to 256, got 2.5'],
    [{ server: { workers: 257 } }, 'server.workers: must be "auto" or a whole number from 1 to 256, got 257'],
    [{ server: { drainDelayMs: -1 } }, 'server.drainDelayMs: must be at least 0'],
    [{ admin: { port: 1.5 } }, 'admin.port: must be an integer, got 1.5'],
    [
      { admin: { allowedHosts: ['ledger-proxy:9090'] } },
      'admin.allowedHosts.0: must be a host name or an IP address, without a scheme or a port',
    ],
    [
      { admin: { allowedHosts: ['http://ledger-proxy'] } },
      'admin.allowedHosts.0: must be a host name or an IP address, without a scheme or a port',
    ],
    [
      { admin: { token: { env: 'NOT A NAME' } } },
      'admin.token.env: must be an environment variable name (the value given is not shown: it may be a secret)',
    ],
    [{ vendor: 'Aptos' }, 'vendor: must match /^[a-z]+$/, got "Aptos"'],
    // A pattern the schema explains is explained in its words, not quoted.
    [
      { cors: { origins: ['https://wallet.example/app'] } },
      'cors.origins.0: must be an origin such as https://wallet.example (scheme, host, optional port; no path), got "https://wallet.example/app"',
    ],
    [{ chainId: 256, upstreams: [{ url: 'http://a' }] }, 'chainId: must be at most 255'],
    [{ upstreams: [] }, 'upstreams: must have at least 1 entry'],
    [{ upstreams: {} }, 'upstreams: must be a list, got a mapping'],
    [{ upstreams: [{}] }, 'upstreams.0.url: required'],
    [{ upstreams: [{ url: 'sim', weight: 0 }] }, 'upstreams.0.weight: must be greater than 0'],
    [
      { upstreams: [{ url: 'sim', role: 'backup' }] },
      'upstreams.0.role: must be one of normal | archive, got "backup"',
    ],
    [{ upstreams: [{ url: 'sim', maxInFlight: 0 }] }, 'upstreams.0.maxInFlight: must be greater than 0'],
    [{ upstreams: [{ url: 'sim', maxRps: -1 }] }, 'upstreams.0.maxRps: must be greater than 0'],
    [{ upstreams: [{ url: 'sim', name: '' }] }, 'upstreams.0.name: must not be empty'],
    [
      { routing: { attemptTimeoutMs: 2000, deadlineMs: 1000 } },
      'routing.deadlineMs: must be at least routing.attemptTimeoutMs',
    ],
    [{ routing: { maxAttempts: 0 } }, 'routing.maxAttempts: must be greater than 0'],
    [{ routing: { hedgeAfterMs: -1 } }, 'routing.hedgeAfterMs: must be at least 0'],
    [{ cache: { memory: { maxBytes: 0 } } }, 'cache.memory.maxBytes: must be greater than 0'],
    [{ cache: { redis: { url: 'http://h:1' } } }, 'cache.redis.url: must be a redis:// or rediss:// URL'],
    [{ cache: { redis: { cluster: [] } } }, 'cache.redis.cluster: must have at least 1 entry'],
    [
      { cache: { redis: { cluster: ['redis://a:1', 'nope'] } } },
      'cache.redis.cluster.1: must be a redis:// or rediss:// URL',
    ],
    [{ cache: { verify: { mode: 'on' } } }, 'cache.verify.mode: must be one of off | sample | always, got "on"'],
    [{ cache: { verify: { sampleRatio: 1.5 } } }, 'cache.verify.sampleRatio: must be at most 1'],
    [{ latest: { staleIfErrorMs: -5 } }, 'latest.staleIfErrorMs: must be at least 0'],
    [
      { rateLimit: { enabled: true } },
      'rateLimit: replaced by tenants: tenants.anonymous.requestsPerSecond limits each client address (and tenants.anonymous.nodeUnitsPerMinute the node work it causes), counted across instances through cache.redis when it is set',
    ],
    [
      { tenants: { anonymous: { requestsPerSecond: 0 } } },
      'tenants.anonymous.requestsPerSecond: must be greater than 0',
    ],
    [
      { tenants: { list: [{ name: 'Wallet' }] } },
      'tenants.list.0.name: must be 1 to 63 of a-z, 0-9, ".", "_", "-" (it labels metrics), got "Wallet"',
    ],
    [
      { tenants: { list: [{ name: 'anonymous' }] } },
      "tenants.list.0.name: 'anonymous' is the tenant of clients without a key",
    ],
    [
      { tenants: { list: [{ name: 'a' }, { name: 'a' }] } },
      'tenants.list.1.name: duplicate name (also tenants.list.0)',
    ],
    [
      { tenants: { list: [{ name: 'a', keys: [{ sha256: 'ABC' }] }] } },
      'tenants.list.0.keys.0.sha256: must match /^[0-9a-f]{64}$/ (the value given is not shown: it may be a secret)',
    ],
    [
      { tenants: { list: [{ name: 'a', priority: 'urgent' }] } },
      'tenants.list.0.priority: must be one of high | normal | low, got "urgent"',
    ],
    [
      { tenants: { costs: { 'view ': 1 } } },
      'tenants.costs.view : must be a route family (view) or a passthrough route (POST /v1/transactions)',
    ],
    [
      { server: { trustProxy: 1 }, tenants: { trustedHeader: 'X-Tenant' } },
      'tenants.trustedHeader: needs server.trustProxy to list the addresses of the layer in front (such as 10.0.0.0/8 or loopback), not a hop count (1): any client that connects directly could name a tenant',
    ],
    [
      { server: { trustProxy: true }, tenants: { trustedHeader: 'X-Tenant' } },
      'tenants.trustedHeader: needs server.trustProxy to list the addresses of the layer in front (such as 10.0.0.0/8 or loopback), not true: any client that connects directly could name a tenant',
    ],
    [{ shedding: { maxInFlight: 0 } }, 'shedding.maxInFlight: must be greater than 0'],
    [{ shedding: { shedFirst: 'random' } }, 'shedding.shedFirst: must be one of none | latest | pinned, got "random"'],
    [{ shedding: { budgetWaitMs: -1 } }, 'shedding.budgetWaitMs: must be at least 0'],
    [
      { log: { level: 'verbose' } },
      'log.level: must be one of fatal | error | warn | info | debug | trace | silent, got "verbose"',
    ],
    [{ sim: { pruneWindow: 0 } }, 'sim.pruneWindow: must be greater than 0'],
    [{ sim: { versionsPerSecond: 0 } }, 'sim.versionsPerSecond: must be greater than 0'],
    [{ sim: { writes: { model: 'dense' } } }, 'sim.writes.model: must be one of period | sparse, got "dense"'],
    [{ sim: { writes: { writeRate: 2 } } }, 'sim.writes.writeRate: must be at most 1'],
    [{ chainId: 1 }, "chainId: differs from sim.chainId (4) while an upstream is 'sim'"],
    [{ admin: { port: 8080 } }, 'admin.port: same host and port as server'],
    [{ sim: { port: 9090 } }, 'sim.port: same host and port as admin'],
    [[], '(root): must be a mapping, got a list'],
  ])('%j → %s', (raw, line) => {
    expect(fail(raw)).toEqual([line]);
  });

  it('lists every problem in the message', () => {
    expect(() => parseConfig({ server: { port: -1 }, cache: { memory: { maxBytes: 0 } } })).toThrow(
      'Invalid configuration:\n  server.port: must be at least 0\n  cache.memory.maxBytes: must be greater than 0',
    );
  });

  it('accepts ports 0 (ephemeral server, admin off) and the edges of ranges', () => {
    const config = parseConfig({ server: { port: 0 }, admin: { port: 0 }, chainId: 4, sim: { port: 0 } });
    expect([config.server.port, config.admin.port, config.sim.port]).toEqual([0, 0, 0]);
    expect(parseConfig({ chainId: 0, upstreams: [{ url: 'http://a' }] }).chainId).toBe(0);
  });

  it.each([true, false, 0, 2, '10.0.0.0/8', '127.0.0.1, ::1/128', 'loopback,10.0.0.0/255.0.0.0'])(
    'trustProxy %j is accepted',
    (value) => {
      expect(parseConfig({ server: { trustProxy: value } }).server.trustProxy).toBe(value);
    },
  );

  it.each([false, '10.0.0.0/8', 'loopback'])('tenants.trustedHeader with trustProxy %j is accepted', (trustProxy) => {
    expect(parseConfig({ server: { trustProxy }, tenants: { trustedHeader: 'X-Tenant' } }).tenants?.trustedHeader).toBe(
      'x-tenant',
    );
  });

  it.each(['yes', '2', '10.0.0.0/33', '', -1, 1.5, ['10.0.0.1']])('trustProxy %j is refused', (value) => {
    expect(fail({ server: { trustProxy: value } })[0]).toMatch(/^server\.trustProxy: must be true, false, a hop count/);
  });
});

describe('upstream urls', () => {
  const urlOf = (url: string): string => parseConfig({ upstreams: [{ url }] }).upstreams[0]!.url;

  it.each([
    ['http://127.0.0.1:8081', 'http://127.0.0.1:8081'],
    ['http://127.0.0.1:8081/', 'http://127.0.0.1:8081'],
    ['http://127.0.0.1:8081/v1', 'http://127.0.0.1:8081'],
    ['http://127.0.0.1:8081/v1/', 'http://127.0.0.1:8081'],
    ['https://Node.Example.com/prefix/v1', 'https://node.example.com/prefix'],
    ['https://node.example.com:443/', 'https://node.example.com'],
    ['http://[::1]:8081/v1', 'http://[::1]:8081'],
    ['sim', 'sim'],
  ])('%s → %s', (given, normalised) => {
    expect(urlOf(given)).toBe(normalised);
  });

  it.each([
    ['ftp://h', "must be 'sim' or an http(s) URL"],
    ['localhost:8080', "must be 'sim' or an http(s) URL"],
    ['SIM', "must be 'sim' or an http(s) URL"],
    ['http://h/v1?x=1', 'must not have a query string'],
    ['http://h/?', 'must not have a query string'],
    ['http://h/#top', 'must not have a fragment'],
    ['http://user:pw@h/', 'must not contain credentials'],
  ])('%s is refused: %s', (url, reason) => {
    expect(fail({ upstreams: [{ url }] })).toEqual([`upstreams.0.url: ${reason}`]);
  });

  it('names an upstream without a name by its position (node1, node2, …), or sim: never by its address, which clients must not see', () => {
    const names = parseConfig({
      upstreams: [
        { url: 'sim' },
        { url: 'http://a.example' },
        { url: 'https://b.example/v1' },
        { url: 'http://c:81', name: 'mine' },
      ],
    }).upstreams.map((u) => u.name);
    expect(names).toEqual(['sim', 'node2', 'node3', 'mine']);
  });

  it('refuses duplicate names after defaulting', () => {
    expect(fail({ upstreams: [{ url: 'http://a:1', name: 'node2' }, { url: 'http://b:1' }] })).toEqual([
      "upstreams.1.name: duplicate name 'node2' (also upstreams.0, its default name: give it a name)",
    ]);
    expect(
      fail({
        upstreams: [
          { url: 'http://a:1', name: 'x' },
          { url: 'http://b:1', name: 'y' },
          { url: 'http://c:1', name: 'x' },
        ],
      }),
    ).toEqual(["upstreams.2.name: duplicate name 'x' (also upstreams.0)"]);
    expect(
      parseConfig({ upstreams: [{ url: 'http://a:1' }, { url: 'http://a:1', name: 'second' }] }).upstreams,
    ).toHaveLength(2);
  });
});

describe('upstream headers (an API key)', () => {
  it('default to none, and keep their values with names lower-cased', () => {
    const [plain, keyed] = parseConfig({
      upstreams: [
        { url: 'http://a:1' },
        { url: 'http://b:1', headers: { 'X-Api-Key': ' k-1 ', Authorization: 'Bearer t' } },
      ],
    }).upstreams;
    expect(plain!.headers).toEqual({});
    expect(keyed!.headers).toEqual({ 'x-api-key': 'k-1', authorization: 'Bearer t' });
  });

  it('refuse names the proxy sets, bad names and control characters, without echoing the value', () => {
    const issues = fail({
      upstreams: [
        {
          url: 'http://a:1',
          headers: { Host: 'evil', 'Content-Length': '1', 'bad name': 'x', 'x-key': 'secret\r\nInjected: 1' },
        },
      ],
    });
    expect(issues).toEqual([
      'upstreams.0.headers.Host: is set by the proxy itself',
      'upstreams.0.headers.Content-Length: is set by the proxy itself',
      'upstreams.0.headers.bad name: must be an HTTP header name',
      'upstreams.0.headers.x-key: must not contain control characters (CR, LF, NUL)',
    ]);
    expect(issues.join('\n')).not.toContain('secret');
    expect(fail({ upstreams: [{ url: 'http://a:1', headers: { 'x-n': 5 } }] })).toEqual([
      'upstreams.0.headers.x-n: must be a string (the value given is not shown: it may be a secret)',
    ]);
  });
});

describe('tenant keys', () => {
  const KEY = 'wallet-secret-key-1';
  const tenants = (...list: Array<{ name: string; keys: unknown[] }>) => ({ tenants: { list } });

  it('a key read from an unset (or empty) environment variable is a config error naming the key and the variable', () => {
    for (const env of [{}, { WALLET_KEY: '' }]) {
      expect(fail(tenants({ name: 'a', keys: [{ sha256: sha256Hex('other') }, { env: 'WALLET_KEY' }] }), env)).toEqual([
        'tenants.list.0.keys.1.env: the environment variable WALLET_KEY is not set (it holds a key of tenant a)',
      ]);
    }
    expect(
      parseConfig(tenants({ name: 'a', keys: [{ env: 'WALLET_KEY' }] }), { WALLET_KEY: KEY }).tenants?.list[0]?.keys,
    ).toEqual([{ env: 'WALLET_KEY' }]);
  });

  it('one key listed twice, for two tenants or for one, by its sha256 or through env, is a config error that shows neither the key nor its hash', () => {
    const issues = fail(
      tenants(
        { name: 'a', keys: [{ sha256: sha256Hex(KEY) }] },
        { name: 'b', keys: [{ env: 'B_KEY' }, { sha256: sha256Hex('b') }, { sha256: sha256Hex('b') }] },
      ),
      { B_KEY: KEY },
    );
    expect(issues).toEqual([
      'tenants.list.1.keys.0: the same key as tenants.list.0.keys.0 (tenant a): a key may be listed once',
      'tenants.list.1.keys.2: the same key as tenants.list.1.keys.1 (tenant b): a key may be listed once',
    ]);
    expect(issues.join('\n')).not.toContain(sha256Hex(KEY));
  });

  it('a value that is not a sha256 (a key pasted as it is) is never echoed, nor anything else under keys', () => {
    for (const keys of [[{ sha256: KEY }], [{ env: KEY }], [KEY], [{ sha256: 12345 }]]) {
      const issues = fail(tenants({ name: 'a', keys }));
      expect(issues.length, JSON.stringify(keys)).toBeGreaterThan(0);
      expect(issues.join('\n'), JSON.stringify(keys)).not.toMatch(/wallet-secret|12345/);
    }
    expect(() =>
      loadConfig({ file: yamlFile(`tenants:\n  list:\n    - name: a\n      keys: [{ sha256: "${KEY}" }]\n`), env: {} }),
    ).toThrow(/tenants\.list\.0\.keys\.0\.sha256: must match/);
    expect(
      thrownBy(ConfigError, () =>
        loadConfig({
          file: yamlFile(`tenants:\n  list:\n    - name: a\n      keys: [{ sha256: "${KEY}" }]\n`),
          env: {},
        }),
      ).message,
    ).not.toContain(KEY);
  });
});

describe('redis', () => {
  it('takes a cluster instead of a url', () => {
    const redis = parseConfig({ cache: { redis: { cluster: ['redis://a:1', 'rediss://b:2'] } } }).cache.redis;
    expect(redis?.cluster).toEqual(['redis://a:1', 'rediss://b:2']);
    expect(redis?.url).toBeUndefined();
  });

  it('needs exactly one of url and cluster', () => {
    expect(fail({ cache: { redis: { url: 'redis://a:1', cluster: ['redis://b:1'] } } })).toEqual([
      'cache.redis.cluster: give either url or cluster, not both',
    ]);
    expect(fail({ cache: { redis: { keyPrefix: 'x:' } } })).toEqual(['cache.redis.url: required (or cluster)']);
  });

  it('accepts credentials in a redis url (AUTH)', () => {
    expect(parseConfig({ cache: { redis: { url: 'redis://:secret@r:6379/0' } } }).cache.redis?.url).toBe(
      'redis://:secret@r:6379/0',
    );
  });
});

describe('frozen output', () => {
  it('is deeply frozen', () => {
    const config = parseConfig({ cache: { redis: { cluster: ['redis://a:1'] } } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.upstreams)).toBe(true);
    expect(Object.isFrozen(config.upstreams[0])).toBe(true);
    expect(Object.isFrozen(config.routing.breaker)).toBe(true);
    expect(Object.isFrozen(config.cache.redis?.cluster)).toBe(true);
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('does not share defaults between results', () => {
    expect(parseConfig({}).upstreams).not.toBe(parseConfig({}).upstreams);
  });
});

describe('shipped config files', () => {
  it('config/default.yaml: one simulated node, memory only', () => {
    const config = loadConfig({ file: 'config/default.yaml', env: {} });
    expect(config.upstreams).toEqual([
      { url: 'sim', name: 'sim', weight: 1, role: 'normal', headers: {}, spreadVersions: 0 },
    ]);
    expect(config.cache.redis).toBeUndefined();
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080 });
  });

  it('config/production.example.yaml: real nodes, redis, aptos mainnet', () => {
    const config = loadConfig({ file: 'config/production.example.yaml', env: {} });
    expect(config.vendor).toBe('aptos');
    expect(config.chainId).toBe(1);
    expect(config.upstreams.map((u) => u.url)).toEqual(['http://10.0.1.21:8080', 'https://api.mainnet.aptoslabs.com']);
    expect(config.upstreams.every((u) => u.url !== 'sim')).toBe(true);
    expect(config.cache.redis?.url).toBe('redis://10.0.2.10:6379');
    expect(config.tenants?.anonymous).toEqual({ priority: 'low', requestsPerSecond: 20, nodeUnitsPerMinute: 600 });
    expect(config.tenants?.list.map((t) => [t.name, t.priority])).toEqual([
      ['wallet-backend', 'high'],
      ['dapp-web', 'normal'],
    ]);
  });
});

describe('tracing', () => {
  it('is off unless otlpEndpoint is set; a bare collector origin gets the OTLP traces path, any other path is kept', () => {
    expect(parseConfig({}).tracing.otlpEndpoint).toBeUndefined();
    const endpoint = (otlpEndpoint: string): string | undefined =>
      parseConfig({ tracing: { otlpEndpoint } }).tracing.otlpEndpoint;
    expect(endpoint('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(endpoint('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(endpoint('https://otlp.example/api/v1/traces')).toBe('https://otlp.example/api/v1/traces');
    expect(parseConfig({}, { LEDGER_PROXY_OTLP_ENDPOINT: 'http://collector:4318' }).tracing.otlpEndpoint).toBe(
      'http://collector:4318/v1/traces',
    );
  });

  it('refuses what could not be a collector or a ratio', () => {
    expect(fail({ tracing: { otlpEndpoint: 'collector:4318' } })).toEqual([
      'tracing.otlpEndpoint: must be an http(s) URL of an OTLP/HTTP collector (http://collector:4318)',
    ]);
    expect(fail({ tracing: { otlpEndpoint: 'grpc://collector:4317' } })[0]).toMatch(
      /^tracing\.otlpEndpoint: must be an http\(s\) URL/,
    );
    expect(fail({ tracing: { sampleRatio: 1.5 } })[0]).toMatch(/^tracing\.sampleRatio: /);
    expect(fail({ tracing: { serviceName: '' } })[0]).toMatch(/^tracing\.serviceName: /);
    expect(fail({ tracing: { sampler: 'always' } })).toEqual(['tracing.sampler: unknown key']);
  });
});
