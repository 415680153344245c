// What a reply costs in bookkeeping: a cache hit, from memory or
// Redis, is logged only at debug; a memory hit is counted but not observed in
// the duration histogram; every other reply is observed, and logged at a level
// that says how it went (a 5xx at error, a 4xx at warn, a 429 and a client gone
// at info). The level follows a reload. A 503 after the nodes failed says in its
// access line what each node attempt got.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { metricValue } from '../helpers/metrics.js';
import { call, capturedLog, HANDLE, proxy, QUIET_ROUTING, rawItem, sim } from '../helpers/proxy.js';
import { httpRequest, openSocket } from '../helpers/raw-socket.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { FROZEN } from '../helpers/tenants.js';
import { until } from '../helpers/until.js';

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
const redis = useRedisServer();

async function start(
  level: 'info' | 'debug',
  cache: Record<string, unknown> = {},
): Promise<{ app: App; url: string; lines: Array<Record<string, unknown>> }> {
  const node = await sim();
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const config = parseConfig({
    server: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    upstreams: [{ url: node.url, name: 'node0' }],
    log: { level },
    cache,
  });
  const app = await buildApp(config, { logger });
  apps.push(app);
  return { app, url: await app.listen(), lines };
}

const requestLines = (lines: Array<Record<string, unknown>>): Array<Record<string, unknown>> =>
  lines.filter((l) => l.msg === 'request');

async function histogramCount(app: App): Promise<number> {
  const text = await app.metrics.registry.getSingleMetricAsString('ledger_proxy_request_duration_seconds');
  return Number(/_count\{endpoint="raw_item"\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe('per-reply bookkeeping', () => {
  it('at info: a miss is logged and observed, memory hits are only counted', async () => {
    const { app, url, lines } = await start('info');
    expect((await rawItem(url, '0x01', { version: 1000 })).headers['x-cache']).toBe('MISS');
    for (let i = 0; i < 5; i++) expect((await rawItem(url, '0x01', { version: 1000 })).headers['x-cache']).toBe('HIT');
    expect(requestLines(lines).map((l) => l.cache)).toEqual(['MISS']);
    expect(await histogramCount(app)).toBe(1);
    const counted = await app.metrics.registry.getSingleMetricAsString('ledger_proxy_requests_total');
    expect(counted).toMatch(/endpoint="raw_item",cache="HIT",status="200"\} 5/);
  });

  it('at info: Redis-tier hits are not logged, and are observed (a slow Redis shows in the histogram)', async () => {
    // Nothing fits the memory tier: every hit after the miss is read from Redis.
    const { app, url, lines } = await start('info', {
      memory: { maxBytes: 1 },
      redis: { url: redis.url, keyPrefix: 'request-log:' },
    });
    expect((await rawItem(url, '0x01', { version: 1000 })).headers['x-cache']).toBe('MISS');
    for (let i = 0; i < 5; i++) {
      const hit = await rawItem(url, '0x01', { version: 1000 });
      expect([hit.headers['x-cache'], hit.headers['x-cache-tier']]).toEqual(['HIT', 'redis']);
    }
    expect(requestLines(lines).map((l) => l.cache)).toEqual(['MISS']);
    expect(await histogramCount(app)).toBe(6);
    const counted = await app.metrics.registry.getSingleMetricAsString('ledger_proxy_requests_total');
    expect(counted).toMatch(/endpoint="raw_item",cache="HIT",status="200"\} 5/);
  });

  it('at debug, and after a reload to debug: memory hits are logged too', async () => {
    const { url, lines } = await start('debug');
    await rawItem(url, '0x01', { version: 1000 });
    await rawItem(url, '0x01', { version: 1000 });
    expect(requestLines(lines).map((l) => l.cache)).toEqual(['MISS', 'HIT']);

    const other = await start('info');
    await other.app.reload({ ...other.app.config, log: { ...other.app.config.log, level: 'debug' } });
    await rawItem(other.url, '0x01', { version: 1000 });
    await rawItem(other.url, '0x01', { version: 1000 });
    expect(requestLines(other.lines).map((l) => l.cache)).toEqual(['MISS', 'HIT']);
  });
});

describe('the access line: its level says how the reply went', () => {
  const LEVEL = { info: 30, warn: 40, error: 50 };

  it.each([
    {
      fault: 'html' as const,
      reason: 'node_broken',
      attempt: 'upstream node0: answered HTTP 502 text/html',
    },
    { fault: 'reset' as const, reason: 'node_failed', attempt: 'upstream node0: connection reset' },
  ])(
    'a 503 after the node $fault: at error, with the reason and what the node attempt got',
    async ({ fault, reason, attempt }) => {
      const node = await sim();
      const { logger, lines } = capturedLog();
      const { app, url } = await proxy([node], { routing: QUIET_ROUTING }, { logger });
      node.faults.set({ mode: fault, routes: ['raw_item'] });
      const reply = await rawItem(url, '0x01', { version: 1000 });
      expect(reply.status).toBe(503);
      expect(node.counters.byRoute.raw_item).toBe(1);
      const [line] = requestLines(lines);
      expect(line).toMatchObject({ level: LEVEL.error, status: 503, reason, attempts: [attempt] });
      // The client read the same in its message; the log no longer needs it.
      expect(reply.json().message).toContain(attempt);
      expect(await metricValue(app, 'ledger_proxy_errors_total', { reason })).toBe(1);
    },
  );

  it('a 4xx at warn, a 429 at info', async () => {
    const node = await sim();
    const { logger, lines } = capturedLog();
    const { url } = await proxy(
      [node],
      { routing: QUIET_ROUTING, tenants: { anonymous: { requestsPerSecond: 2 } } },
      { logger, ...FROZEN },
    );
    expect((await call(url, '/v1/accounts/0xZZ/resources?ledger_version=1000')).status).toBe(400);
    expect((await rawItem(url, '0x01', { version: 1000 })).status).toBe(200);
    expect((await rawItem(url, '0x01', { version: 1000 })).status).toBe(429);
    // The hit was the 200 before it: only the miss reached the node.
    expect(node.counters.byRoute.raw_item).toBe(1);
    expect(requestLines(lines).map((l) => [l.status, l.level])).toEqual([
      [400, LEVEL.warn],
      [200, LEVEL.info],
      [429, LEVEL.info],
    ]);
  });

  it('a client that left before its reply: at info, whatever the status', async () => {
    const node = await sim();
    const { logger, lines } = capturedLog();
    const { url } = await proxy(
      [node],
      { routing: { ...QUIET_ROUTING, attemptTimeoutMs: 300, deadlineMs: 300, maxAttempts: 1 } },
      { logger },
    );
    node.faults.set({ mode: 'hang', routes: ['raw_item'] });
    const client = await openSocket(url);
    const body = JSON.stringify({ key: '0x01' });
    client.socket.write(
      httpRequest(
        `POST /v1/tables/${HANDLE}/raw_item?ledger_version=1000 HTTP/1.1`,
        ['host: proxy', 'content-type: application/json', 'accept: application/x-bcs'],
        body,
      ),
    );
    await until(() => node.counters.byRoute.raw_item === 1, 5000, 'the read at the node');
    client.socket.destroy();
    await until(() => requestLines(lines).length === 1, 5000, 'the access line of the read its client left');
    expect(requestLines(lines)[0]).toMatchObject({ status: 503, level: LEVEL.info, reason: 'node_timeout' });
  });
});
