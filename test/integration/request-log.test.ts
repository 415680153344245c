// What a reply costs in bookkeeping: a cache hit, from memory or
// Redis, is logged only at debug; a memory hit is counted but not observed in
// the duration histogram; every other reply is observed, and logged at info. The
// level follows a reload.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { rawItem, sim } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';

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
