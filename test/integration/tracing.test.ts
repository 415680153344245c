// OpenTelemetry tracing, off by default: with tracing.otlpEndpoint set, the spans
// of a request (the request, its cache lookup, Redis, each node attempt) reach an
// OTLP/HTTP collector (one in this process), every node call made for a request
// carries a traceparent under the request's trace, and a client's traceparent
// is continued. With it unset, nothing is traced and no traceparent reaches a node.
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { type CollectedSpan, type OtlpCollector, otlpCollector } from '../helpers/otlp-collector.js';
import { call, capturedLog, proxy, rawItem, sim, QUIET } from '../helpers/proxy.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const API_KEY = 'tracing-test-key-never-exported';

// Spans are sent in batches; a short delay lets a test wait for them instead of the default 5 s.
beforeEach(() => {
  vi.stubEnv('OTEL_BSP_SCHEDULE_DELAY', '20');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function traced(
  collector: OtlpCollector,
  tracing: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { ...QUIET, tracing: { otlpEndpoint: collector.url, sampleRatio: 1, ...tracing }, ...extra };
}

/** The span of the request whose reply carried `requestId`, once the collector has it. */
async function requestSpan(collector: OtlpCollector, requestId: string): Promise<CollectedSpan> {
  const find = (): CollectedSpan | undefined =>
    collector.spans.find((s) => s.kind === SERVER && s.attributes['ledger_proxy.request_id'] === requestId);
  await until(() => find() !== undefined, 5000, `the span of request ${requestId}`);
  return find()!;
}

function childrenOf(collector: OtlpCollector, parent: CollectedSpan): CollectedSpan[] {
  return collector.spans.filter((s) => s.parentSpanId === parent.spanId);
}

/** The traceparent of each call the node got for `path` (probes excluded). */
function traceparentsAt(node: SimNode, path: string): Array<string | undefined> {
  return node.counters.requests
    .filter((r) => r.url.startsWith(path))
    .map((r) => r.headers.traceparent as string | undefined);
}

const ITEM_PATH = '/v1/tables/';

describe('tracing on', () => {
  it('a miss: request → cache lookup → node attempt, the node gets the attempt as its parent, and no key, body or query is exported', async () => {
    const node = await sim();
    const collector = await otlpCollector();
    const tenants = {
      anonymous: false,
      list: [{ name: 'wallet', keys: [{ sha256: createHash('sha256').update(API_KEY).digest('hex') }] }],
    };
    const p = await proxy([node], traced(collector, {}, { tenants }));
    const miss = await call(p.url, '/v1/tables/0x' + 'ab'.repeat(32) + '/raw_item?ledger_version=1001', {
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs', authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ key: '0x02' }),
    });
    expect(miss.headers['x-cache']).toBe('MISS');

    const request = await requestSpan(collector, miss.headers['x-request-id']);
    expect(request).toMatchObject({ service: 'ledger-proxy', name: 'POST raw_item', parentSpanId: undefined });
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': miss.status,
      'ledger_proxy.route_family': 'raw_item',
      'ledger_proxy.cache': 'MISS',
      'ledger_proxy.tenant': 'wallet',
      'ledger_proxy.upstream': 'node0',
      'client.address': '127.0.0.1',
      'url.path': `/v1/tables/0x${'ab'.repeat(32)}/raw_item`,
    });
    const [lookup, ...others] = childrenOf(collector, request);
    expect(others).toEqual([]);
    expect(lookup).toMatchObject({
      name: 'cache lookup',
      traceId: request.traceId,
      attributes: { 'ledger_proxy.cache': 'MISS' },
    });
    const [attempt, ...more] = childrenOf(collector, lookup!);
    expect(more).toEqual([]);
    expect(attempt).toMatchObject({ name: 'node attempt', kind: CLIENT, traceId: request.traceId });
    expect(attempt!.attributes).toMatchObject({
      'ledger_proxy.node': 'node0',
      'http.response.status_code': miss.status,
      'ledger_proxy.outcome': 'ok',
    });

    expect(traceparentsAt(node, ITEM_PATH).at(-1)).toBe(`00-${request.traceId}-${attempt!.spanId}-01`);
    const exported = JSON.stringify(collector.spans);
    expect(exported).not.toContain(API_KEY);
    expect(exported).not.toContain('0x02');
    expect(exported).not.toContain('ledger_version');
    expect(new Set(collector.paths)).toEqual(new Set(['/v1/traces']));
  });

  it('a memory hit: the request and its lookup, no node attempt, no Redis span', async () => {
    const node = await sim();
    const collector = await otlpCollector();
    const p = await proxy([node], traced(collector));
    await rawItem(p.url, '0x01', { version: 1000 });
    const calls = node.counters.total;
    const hit = await rawItem(p.url, '0x01', { version: 1000 });
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(node.counters.total).toBe(calls);

    const request = await requestSpan(collector, hit.headers['x-request-id']);
    expect(request.attributes).toMatchObject({ 'ledger_proxy.cache': 'HIT', 'ledger_proxy.tier': 'memory' });
    const children = childrenOf(collector, request);
    expect(
      children.map((s) => [s.name, s.attributes['ledger_proxy.cache'], s.attributes['ledger_proxy.tier']]),
    ).toEqual([['cache lookup', 'HIT', 'memory']]);
    expect(collector.trace(request.traceId)).toHaveLength(2);
  });

  it('passthrough: each node attempt goes under the request, and the node gets its traceparent', async () => {
    const node = await sim();
    const collector = await otlpCollector();
    const p = await proxy([node], traced(collector));
    const reply = await call(p.url, '/v1/estimate_gas_price');
    expect(reply.status).toBe(200);

    const request = await requestSpan(collector, reply.headers['x-request-id']);
    expect(request).toMatchObject({
      name: 'GET passthrough',
      attributes: { 'ledger_proxy.cache': 'BYPASS', 'ledger_proxy.route_family': 'passthrough' },
    });
    const [attempt, ...others] = childrenOf(collector, request);
    expect(others).toEqual([]);
    expect(attempt).toMatchObject({
      name: 'node attempt',
      attributes: { 'ledger_proxy.node': 'node0', 'ledger_proxy.outcome': 'ok', 'http.response.status_code': 200 },
    });
    expect(traceparentsAt(node, '/v1/estimate_gas_price')).toEqual([`00-${request.traceId}-${attempt!.spanId}-01`]);
  });

  it("a client's traceparent is continued: the request's span is its child, and the node's call is in its trace", async () => {
    const node = await sim();
    const collector = await otlpCollector();
    // Nothing starts a trace here: only the client's sampled flag has this request traced.
    const p = await proxy([node], traced(collector, { sampleRatio: 0 }));
    const reply = await call(p.url, '/v1/estimate_gas_price', {
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=opaque' },
    });

    const request = await requestSpan(collector, reply.headers['x-request-id']);
    expect(request).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    const [attempt] = childrenOf(collector, request);
    const sent = node.counters.requests.filter((r) => r.url === '/v1/estimate_gas_price');
    expect(sent.map((r) => [r.headers.traceparent, r.headers.tracestate])).toEqual([
      [`00-${CLIENT_TRACE}-${attempt!.spanId}-01`, 'vendor=opaque'],
    ]);
  });

  it('an unsampled request exports nothing, and its node calls still carry its trace, unsampled', async () => {
    const node = await sim();
    const collector = await otlpCollector();
    const p = await proxy([node], traced(collector, { sampleRatio: 0, followClientSampling: false }));
    // The client asks for a trace; with followClientSampling false the ratio (0) decides.
    await rawItem(p.url, '0x01', { version: 1000 });
    await call(p.url, '/v1/estimate_gas_price', { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    const [read] = traceparentsAt(node, ITEM_PATH);
    expect(read).toMatch(TRACEPARENT);
    expect(TRACEPARENT.exec(read!)![3]).toBe('00');
    const [passthrough] = traceparentsAt(node, '/v1/estimate_gas_price');
    expect(passthrough).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-00$`));
    expect(passthrough).not.toContain(CLIENT_SPAN);
    // Closing sends whatever was batched: nothing was.
    await p.app.close();
    expect(collector.spans).toEqual([]);
  });

  it('closing the proxy sends the spans not sent yet', async () => {
    vi.stubEnv('OTEL_BSP_SCHEDULE_DELAY', '600000');
    const node = await sim();
    const collector = await otlpCollector();
    const p = await proxy([node], traced(collector));
    const reply = await call(p.url, '/v1/estimate_gas_price');
    expect(collector.spans).toEqual([]);
    await p.app.close();
    expect(
      collector.spans.filter((s) => s.attributes['ledger_proxy.request_id'] === reply.headers['x-request-id']),
    ).toHaveLength(1);
  });

  it('spans the collector does not take are logged at warn, once for many', async () => {
    const node = await sim();
    const log = capturedLog();
    const collector = await otlpCollector({ refuse: 400 });
    const p = await proxy([node], traced(collector), { logger: log.logger });
    const failures = (): Array<Record<string, unknown>> =>
      log.lines.filter((l) => l.msg === 'tracing: spans could not be sent to the collector (tracing.otlpEndpoint)');
    await call(p.url, '/v1/estimate_gas_price');
    await until(() => failures().length > 0, 10_000, 'the failed export logged');
    await call(p.url, '/v1/estimate_gas_price');
    await p.app.close();
    expect(collector.paths.length).toBeGreaterThan(1);
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatchObject({ level: 40, spans: 2 });
  });

  it('a node attempt that fails is an error span, and the next node is tried under the same lookup', async () => {
    // The first node is a version ahead, so it is asked first; it resets the connection.
    const first = await sim();
    const second = await sim();
    first.ledger.advance(1);
    const collector = await otlpCollector();
    const p = await proxy([first, second], traced(collector));
    first.faults.set({ mode: 'reset', routes: ['raw_item'] });
    const reply = await rawItem(p.url, '0x01', { version: 1000 });
    expect(reply.status).toBeLessThan(500);
    expect(first.counters.byRoute.raw_item).toBe(1);

    const request = await requestSpan(collector, reply.headers['x-request-id']);
    const [lookup] = childrenOf(collector, request);
    const attempts = childrenOf(collector, lookup!).map((s) => [
      s.attributes['ledger_proxy.node'],
      s.attributes['ledger_proxy.outcome'],
      s.statusCode,
      s.statusMessage,
    ]);
    expect(attempts).toEqual([
      ['node0', 'failed', ERROR, 'upstream node0: connection reset'],
      ['node1', 'ok', 0, undefined],
    ]);
    // Each node got the traceparent of its own attempt.
    const ids = childrenOf(collector, lookup!).map((s) => s.spanId);
    expect([...traceparentsAt(first, ITEM_PATH), ...traceparentsAt(second, ITEM_PATH)]).toEqual(
      ids.map((id) => `00-${request.traceId}-${id}-01`),
    );
  });
});

describe('tracing on, with Redis', () => {
  const redis = useRedisServer({ flushEach: true });

  it("a Redis hit: the lookup's Redis span found it, no node attempt; a Redis miss is looked up, then a node asked", async () => {
    const node = await sim();
    const collector = await otlpCollector();
    const config = traced(collector, {}, { cache: { redis: { url: redis.url, keyPrefix: 'tracing:' } } });
    const filler = await proxy([node], config);
    const miss = await rawItem(filler.url, '0x01', { version: 1000 });
    expect(miss.headers['x-cache']).toBe('MISS');
    const missSpan = await requestSpan(collector, miss.headers['x-request-id']);
    const [missLookup] = childrenOf(collector, missSpan);
    expect(childrenOf(collector, missLookup!).map((s) => [s.name, s.attributes['ledger_proxy.found']])).toEqual([
      ['redis get', false],
      ['node attempt', undefined],
    ]);

    // Another instance, memory empty: Redis has the answer once the first instance wrote it.
    const other = await proxy([node], config);
    let hit = await rawItem(other.url, '0x01', { version: 1000 });
    await until(
      async () => {
        if (hit.headers['x-cache-tier'] === 'redis') return true;
        hit = await rawItem(other.url, '0x01', { version: 1000 });
        return hit.headers['x-cache-tier'] === 'redis' || hit.headers['x-cache-tier'] === 'memory';
      },
      5000,
      'a hit on the second instance',
    );
    expect(hit.headers['x-cache-tier']).toBe('redis');
    const hitSpan = await requestSpan(collector, hit.headers['x-request-id']);
    const [hitLookup] = childrenOf(collector, hitSpan);
    expect(hitLookup!.attributes).toMatchObject({ 'ledger_proxy.cache': 'HIT', 'ledger_proxy.tier': 'redis' });
    expect(childrenOf(collector, hitLookup!).map((s) => [s.name, s.attributes['ledger_proxy.found']])).toEqual([
      ['redis get', true],
    ]);
  });
});

describe('tracing off (the default)', () => {
  it("no traceparent reaches a node on reads or passthrough; a client's reaches a node only as a passthrough header", async () => {
    const node = await sim();
    const p = await proxy([node], QUIET);
    expect(p.app.config.tracing.otlpEndpoint).toBeUndefined();
    await rawItem(p.url, '0x01', { version: 1000 });
    await rawItem(p.url, '0x01', { version: 1000 });
    await call(p.url, '/v1/estimate_gas_price');
    expect(
      node.counters.requests.filter((r) => r.url.startsWith('/v1/')).every((r) => r.headers.traceparent === undefined),
    ).toBe(true);
    // A read's node call is the proxy's own: a client's traceparent is not put on it.
    await call(p.url, `/v1/tables/0x${'ab'.repeat(32)}/raw_item?ledger_version=1002`, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/x-bcs',
        traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      },
      body: JSON.stringify({ key: '0x01' }),
    });
    expect(traceparentsAt(node, ITEM_PATH).at(-1)).toBeUndefined();
    // Passthrough relays a client's end-to-end headers as they came, its traceparent among them.
    await call(p.url, '/v1/estimate_gas_price', { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    expect(traceparentsAt(node, '/v1/estimate_gas_price')).toEqual([undefined, `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`]);
  });
});
