// The admin listener: /metrics counts exactly what the clients did, /healthz and
// /readyz say whether the process is up and whether a node is healthy, and the
// admin and public listeners do not serve each other's routes.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimNode } from '../../src/sim/index.js';
import { freePort } from '../helpers/free-port.js';
import { call, HANDLE, proxy, rawItem, sim, viewJson, QUIET_ROUTING } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { hex } from '../helpers/cache.js';
import { expectNodeErrorBody } from '../helpers/expect.js';
import { parsePrometheus, type Sample, sampleValue, samples } from '../helpers/prometheus.js';

const OWNER = '0x' + '42'.repeat(32);

async function scrape(adminUrl: string): Promise<Sample[]> {
  const res = await call(adminUrl, '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return parsePrometheus(res.body.toString('utf8'));
}

async function withAdmin(node: SimNode, routing: Record<string, unknown> = QUIET_ROUTING) {
  const p = await proxy([node], { admin: { host: '127.0.0.1', port: await freePort() }, routing });
  const adminUrl = p.app.adminUrl();
  expect(adminUrl).toBeDefined();
  return { ...p, adminUrl: adminUrl! };
}

describe('metrics on the admin listener', () => {
  it('counts exactly what the clients did', async () => {
    const node = await sim();
    const { url, adminUrl } = await withAdmin(node);
    const keys = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 9])).filter(
      (k) => simTableItem(HANDLE, k, 1000n) !== null,
    );

    // 3 pinned misses on distinct keys
    for (const v of [990, 980, 970]) {
      const r = await viewJson(url, '0x1::sim::balance', [OWNER], { version: v });
      expect(r.status).toBe(200);
      expect(r.headers['x-cache']).toBe('MISS');
    }
    // 5 hits
    for (const v of [990, 990, 980, 980, 970]) {
      const r = await viewJson(url, '0x1::sim::balance', [OWNER], { version: v });
      expect(r.status).toBe(200);
      expect(r.headers['x-cache']).toBe('HIT');
    }
    // 2 latest reads (raw_item, distinct keys)
    for (const k of keys.slice(0, 2)) {
      const r = await rawItem(url, hex(k));
      expect(r.status).toBe(200);
      expect(r.headers['x-cache']).toBe('MISS');
    }
    // 1 bad request: malformed JSON to /v1/view
    const bad = await call(url, '/v1/view', { headers: { 'content-type': 'application/json' }, body: '{"function":' });
    expectNodeErrorBody(bad, 400);
    expect(bad.headers['x-cache']).toBe('BYPASS');

    const m = await scrape(adminUrl);
    const req = 'ledger_proxy_requests_total';
    expect(sampleValue(m, req, { endpoint: 'view', cache: 'MISS', status: '200' })).toBe(3);
    expect(sampleValue(m, req, { endpoint: 'view', cache: 'HIT', status: '200' })).toBe(5);
    expect(sampleValue(m, req, { endpoint: 'raw_item', cache: 'MISS', status: '200' })).toBe(2);
    // The malformed request is counted once, as a BYPASS 400 (its endpoint label: next test).
    expect(samples(m, req, { cache: 'BYPASS', status: '400' }).reduce((sum, s) => sum + s.value, 0)).toBe(1);
    // Nothing else was counted: 3 + 5 + 2 + 1.
    expect(samples(m, req).reduce((sum, s) => sum + s.value, 0)).toBe(11);

    // Request durations per endpoint: the histogram counts the same requests.
    expect(sampleValue(m, 'ledger_proxy_request_duration_seconds_count', { endpoint: 'raw_item' })).toBe(2);

    // Upstream calls: 3 pinned misses + 2 latest reads reached the node (probes are not client calls).
    expect(sampleValue(m, 'ledger_proxy_upstream_requests_total', { upstream: 'node0', outcome: 'ok' })).toBe(5);
    expect(node.counters.byRoute.view + node.counters.byRoute.raw_item).toBe(5);
    expect(sampleValue(m, 'ledger_proxy_upstream_duration_seconds_count', { upstream: 'node0' })).toBe(5);
    expect(sampleValue(m, 'ledger_proxy_upstream_ledger_version', { upstream: 'node0' })).toBe(1000);
    expect(sampleValue(m, 'ledger_proxy_upstream_state', { upstream: 'node0', state: 'healthy' })).toBe(1);
    expect(sampleValue(m, 'ledger_proxy_upstream_state', { upstream: 'node0', state: 'down' })).toBe(0);
    expect(sampleValue(m, 'ledger_proxy_upstream_in_flight', { upstream: 'node0' })).toBe(0);
    expect(sampleValue(m, 'ledger_proxy_watermark_version', {})).toBe(1000);
    expect(sampleValue(m, 'ledger_proxy_cache_entries', { tier: 'memory' })).toBeGreaterThanOrEqual(5);
    expect(sampleValue(m, 'ledger_proxy_cache_bytes', { tier: 'memory' })).toBeGreaterThan(0);
    // Process metrics carry the prefix too.
    expect(samples(m, 'ledger_proxy_process_cpu_user_seconds_total').length).toBe(1);
  });

  it('labels a refused read with the endpoint it was sent to (not passthrough)', async () => {
    const node = await sim();
    const { url, adminUrl } = await withAdmin(node);
    expectNodeErrorBody(
      await call(url, '/v1/view', { headers: { 'content-type': 'application/json' }, body: '{"function":' }),
      400,
    );
    expectNodeErrorBody(await rawItem(url, '0xzz', { version: 990 }), 400);
    expectNodeErrorBody(await viewJson(url, 'not-a-function-id', [], { version: 990 }), 400);
    expect(node.counters.byRoute.view + node.counters.byRoute.raw_item).toBe(0);
    const m = await scrape(adminUrl);
    const labelled = samples(m, 'ledger_proxy_requests_total', { cache: 'BYPASS', status: '400' }).map((s) => [
      s.labels.endpoint,
      s.value,
    ]);
    // docs/operations/observability.md: endpoint is a route family, passthrough or other; these reached the
    // served routes /v1/view and /v1/tables/{handle}/raw_item, not the passthrough.
    expect(Object.fromEntries(labelled)).toEqual({ view: 2, raw_item: 1 });
  });

  it('counts passthrough requests under endpoint passthrough', async () => {
    const node = await sim();
    const { url, adminUrl } = await withAdmin(node);
    expect((await call(url, '/v1')).status).toBe(200);
    expect((await call(url, '/v1/estimate_gas_price')).status).toBe(200);
    expect((await call(url, '/v1/no/such/route')).status).toBe(404);
    const m = await scrape(adminUrl);
    expect(
      sampleValue(m, 'ledger_proxy_requests_total', { endpoint: 'passthrough', cache: 'BYPASS', status: '200' }),
    ).toBe(2);
    expect(
      sampleValue(m, 'ledger_proxy_requests_total', { endpoint: 'passthrough', cache: 'BYPASS', status: '404' }),
    ).toBe(1);
  });

  it('/healthz is 200; /readyz is 200 with a healthy node and 503 once probes see it down', async () => {
    const node = await sim();
    const { adminUrl } = await withAdmin(node, {
      probeIntervalMs: 50,
      breaker: { failureThreshold: 1, openMs: 60_000 },
    });
    const health = await call(adminUrl, '/healthz');
    expect(health.status).toBe(200);
    const ready = await call(adminUrl, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json()).toMatchObject({ ready: true, upstreams: [{ name: 'node0', state: 'healthy' }] });

    await node.stop();
    await until(async () => (await call(adminUrl, '/readyz')).status === 503, 5000, '/readyz to say not ready');
    const after = await call(adminUrl, '/readyz');
    expect(after.status).toBe(503);
    expect(after.json()).toMatchObject({ ready: false, upstreams: [{ name: 'node0', state: 'down' }] });
    expect(after.json().reason).toMatch(/^no node is healthy \(node0: down, its probe got /);
    // The process is still up.
    expect((await call(adminUrl, '/healthz')).status).toBe(200);
    const m = await scrape(adminUrl);
    expect(sampleValue(m, 'ledger_proxy_upstream_state', { upstream: 'node0', state: 'down' })).toBe(1);
    expect(sampleValue(m, 'ledger_proxy_upstream_state', { upstream: 'node0', state: 'healthy' })).toBe(0);
  });

  it('/ lists the admin endpoints; /readyz says it is shutting down once readiness fails', async () => {
    const node = await sim();
    const { app, adminUrl } = await withAdmin(node);
    const root = await call(adminUrl, '/');
    expect(root.status).toBe(200);
    const listed = root.json().endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(listed).toEqual(['GET /', 'GET /metrics', 'GET /healthz', 'GET /readyz', 'POST /cache/purge']);
    // Every GET listed answers.
    for (const path of listed.filter((l: string) => l.startsWith('GET ')).map((l: string) => l.slice(4)))
      expect((await call(adminUrl, path)).status, path).toBe(200);

    expect((await call(adminUrl, '/readyz')).json()).not.toHaveProperty('reason');
    app.failReadiness();
    const closing = await call(adminUrl, '/readyz');
    expect(closing.status).toBe(503);
    expect(closing.json()).toMatchObject({ ready: false, reason: expect.stringMatching(/^shutting down/) });
  });

  it('admin routes are not on the public port, and public routes are not on the admin port', async () => {
    const node = await sim();
    const { url, adminUrl } = await withAdmin(node);
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      const r = await call(url, path);
      expectNodeErrorBody(r, 404);
      expect(r.body.toString('utf8')).not.toContain('ledger_proxy_');
    }
    const before = node.counters.total;
    expectNodeErrorBody(await call(adminUrl, '/v1'), 404);
    expectNodeErrorBody(await call(adminUrl, '/v1/accounts/0x1/module/sim'), 404);
    expectNodeErrorBody(await rawItem(adminUrl, '0x01', { version: 990 }), 404);
    expectNodeErrorBody(await viewJson(adminUrl, '0x1::sim::balance', [OWNER], { version: 990 }), 404);
    // Nothing sent to the admin port reached the node.
    expect(node.counters.total).toBe(before);
  });
});
