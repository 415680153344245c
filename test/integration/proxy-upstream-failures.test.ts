// A single node that fails in every way the sim can: the proxy answers a 503
// internal_error body that names the node and what happened (never HTML, never
// empty), passes a node's own JSON 500 through, caches none of it, and recovers.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimFaultMode, type SimNode } from '../../src/sim/index.js';
import {
  call,
  capturedLog,
  freePort,
  HANDLE,
  ledgerHeaders,
  proxy,
  rawItem,
  sim,
  viewJson,
  type Reply,
  QUIET_ROUTING,
} from '../helpers/proxy.js';
import { expectUnavailable, simHeaders } from '../helpers/expect.js';
import { ManualProbes } from '../helpers/probes.js';
import { until } from '../helpers/until.js';

const ROUTING = { routing: { attemptTimeoutMs: 300, deadlineMs: 1000, maxAttempts: 1 } };
const NAME = 'alpha';
const KEY = Array.from({ length: 64 }, (_, i) => Buffer.from([i, 9])).find(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
)!;
const KEY_HEX = '0x' + KEY.toString('hex');

async function setup(): Promise<{ node: SimNode; url: string }> {
  const node = await sim();
  const { url } = await proxy([{ url: node.url, name: NAME }], ROUTING);
  return { node, url };
}

/** 503 internal_error whose message names the node and every part; the proxy's watermark in the headers. */
function expectNodeUnavailable(reply: Reply, parts: string[]): void {
  expectUnavailable(reply, [`upstream ${NAME}`, ...parts]);
  // A proxy-made error carries the freshest snapshot it knows.
  expect(ledgerHeaders(reply)).toEqual(simHeaders(1000n, 0n));
  expect(reply.headers['x-cache']).not.toBe('HIT');
}

/** Both endpoints, latest and pinned (the fault is limited to the route, so probes are unaffected). */
type Read = [label: string, read: (url: string) => Promise<Reply>, route: 'raw_item' | 'view'];
const READS: Read[] = [
  ['raw_item latest', (url) => rawItem(url, KEY_HEX), 'raw_item'],
  ['raw_item pinned', (url) => rawItem(url, KEY_HEX, { version: 990 }), 'raw_item'],
  ['view latest', (url) => viewJson(url, '0x1::sim::add', ['1', '2']), 'view'],
  ['view pinned', (url) => viewJson(url, '0x1::sim::add', ['1', '2'], { version: 990 }), 'view'],
];

/** After the fault: the same read is served by the node (the failure was not cached). */
async function expectServedAfter(node: SimNode, url: string, [label, read, route]: Read): Promise<void> {
  const before = node.counters.byRoute[route];
  const ok = await read(url);
  expect(ok.status, `${label}: ${ok.body.toString()}`).toBe(200);
  expect(ok.headers['x-cache'], label).toBe('MISS');
  expect(node.counters.byRoute[route], label).toBe(before + 1);
  if (route === 'view') expect(ok.json()).toEqual(['3']);
  else expect(ok.body).toEqual(simTableItem(HANDLE, KEY, label.endsWith('pinned') ? 990n : 1000n));
}

describe('proxy upstream failures (one node, maxAttempts 1)', () => {
  it('node stopped (connection refused) → 503 naming the node and "connection refused"', async () => {
    const { node, url } = await setup();
    await node.stop();
    for (const [label, read] of READS) {
      const reply = await read(url);
      expect(reply.status, label).toBe(503);
      expectNodeUnavailable(reply, ['connection refused']);
    }
  });

  const cases: Array<[SimFaultMode, string[]]> = [
    ['reset', ['connection reset']],
    ['html', ['HTTP 502', 'text/html']],
    ['status429', ['429']],
    ['empty', ['HTTP 503', 'empty']],
  ];
  for (const [mode, parts] of cases) {
    it(`'${mode}' → 503 internal_error naming the node and ${parts.map((p) => `"${p}"`).join(', ')}; not cached`, async () => {
      const { node, url } = await setup();
      for (const [label, read, route] of READS) {
        node.faults.set({ mode, routes: [route], count: 1 });
        const before = node.counters.byRoute[route];
        const reply = await read(url);
        expect(reply.status, label).toBe(503);
        expectNodeUnavailable(reply, parts);
        // maxAttempts 1: exactly one call reached the node.
        expect(node.counters.byRoute[route], label).toBe(before + 1);
        await expectServedAfter(node, url, [label, read, route]);
      }
    });
  }

  it('\'hang\' → 503 "timed out" within the deadline; not cached', async () => {
    const { node, url } = await setup();
    for (const [label, read, route] of READS) {
      node.faults.set({ mode: 'hang', routes: [route], count: 1 });
      const started = performance.now();
      const reply = await read(url);
      const elapsed = performance.now() - started;
      expect(reply.status, label).toBe(503);
      expectNodeUnavailable(reply, ['timed out after 300 ms']);
      expect(elapsed, label).toBeGreaterThanOrEqual(290);
      expect(elapsed, label).toBeLessThan(1000);
      await expectServedAfter(node, url, [label, read, route]);
    }
  });

  it("'status500' → the node's JSON 500 body passed through unchanged; not cached", async () => {
    const { node, url } = await setup();
    for (const [label, read, route] of READS) {
      node.faults.set({ mode: 'status500', routes: [route], count: 1 });
      const reply = await read(url);
      expect(reply.status, label).toBe(500);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.body.toString()).toBe(
        '{"message":"Internal error: simulated failure","error_code":"internal_error","vm_error_code":null}',
      );
      expect(ledgerHeaders(reply)).toEqual(simHeaders(1000n, 0n));
      expect(reply.headers['x-cache']).not.toBe('HIT');
      await expectServedAfter(node, url, [label, read, route]);
    }
  });

  it("a 'slow' node under the attempt timeout still answers 200; over it, 503", async () => {
    const { node, url } = await setup();
    node.faults.set({ mode: 'slow', delayMs: 100, routes: ['raw_item', 'view'] });
    const raw = await rawItem(url, KEY_HEX, { version: 990 });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual(simTableItem(HANDLE, KEY, 990n));
    const view = await viewJson(url, '0x1::sim::add', ['20', '22']);
    expect(view.status).toBe(200);
    expect(view.json()).toEqual(['42']);
    expect(view.headers['x-node-gas-used']).toBe('3');

    node.faults.set({ mode: 'slow', delayMs: 600, routes: ['view'], count: 1 });
    expectNodeUnavailable(await viewJson(url, '0x1::sim::add', ['20', '22'], { version: 990 }), [
      'timed out after 300 ms',
    ]);
  });

  it('after sim.restart() service recovers', async () => {
    const { node, url } = await setup();
    await node.stop();
    expectNodeUnavailable(await rawItem(url, KEY_HEX, { version: 990 }), ['connection refused']);
    expectNodeUnavailable(await viewJson(url, '0x1::sim::add', ['1', '2']), ['connection refused']);
    await node.restart();
    let reply: Reply | undefined;
    await until(
      async () => {
        reply = await rawItem(url, KEY_HEX, { version: 990 });
        if (reply.status !== 200) expect(reply.status).toBe(503);
        return reply.status === 200;
      },
      10_000,
      'a read answered once the node is back',
    );
    expect(reply!.body).toEqual(simTableItem(HANDLE, KEY, 990n));
    const view = await viewJson(url, '0x1::sim::add', ['1', '2']);
    expect(view.status).toBe(200);
    expect(view.json()).toEqual(['3']);
    expect(ledgerHeaders(view)).toEqual(simHeaders(1000n, 0n));
  });
});

describe('one node, one name', () => {
  it('a node configured by url alone is "node1" in client messages, the log, /readyz and the metrics labels; its host:port only in the url the operator sees beside the name', async () => {
    const node = await sim();
    const { logger, lines } = capturedLog();
    const adminPort = await freePort();
    const probes = new ManualProbes();
    // name: undefined keeps the config's default name, the node's position.
    const { app, url } = await proxy(
      [{ url: node.url, name: undefined }],
      { ...ROUTING, admin: { host: '127.0.0.1', port: adminPort } },
      { logger, probeSchedule: probes },
    );
    const admin = app.adminUrl()!;
    const address = `127.0.0.1:${node.port}`;
    const readyz = async (): Promise<Array<{ name: string; url: string; state: string }>> =>
      (await call(admin, '/readyz')).json().upstreams;
    expect(await readyz()).toMatchObject([{ name: 'node1', state: 'healthy' }]);
    await node.stop();
    for (const [label, read] of READS) {
      const reply = await read(url);
      expect(reply.status, label).toBe(503);
      const message: string = reply.json().message;
      expect(message, label).toContain('node1');
      expect(message, label).not.toContain(String(node.port));
      expect(message, label).not.toContain('127.0.0.1');
    }
    // A probe round that finds it gone: the node is down.
    await probes.round();
    // The admin listener is the operator's: which node node1 is, by its url beside the name, and nowhere else.
    const [entry] = await readyz();
    expect(entry).toMatchObject({ name: 'node1', url: node.url, state: 'down' });
    const { url: shown, ...rest } = entry;
    expect(shown).toContain(address);
    expect(JSON.stringify(rest)).not.toContain(address);
    const metrics = (await call(admin, '/metrics')).body.toString('utf8');
    expect(metrics).toContain('ledger_proxy_upstream_state{upstream="node1",state="down"} 1');
    expect(metrics).not.toContain(address);
    const named = lines.filter((line) => line.upstream !== undefined);
    const down = named.filter((line) => line.transition === 'down');
    expect(down, 'the down line').toHaveLength(1);
    expect(down[0].url).toBe(node.url);
    expect(new Set(named.map((line) => line.upstream))).toEqual(new Set(['node1']));
    // In the log, only a node's state lines carry its url; no message and no access line names the address.
    const withoutUrl = lines.map(({ url: _url, ...line }) => JSON.stringify(line));
    expect(withoutUrl.join('\n')).not.toContain(address);
  });
});

describe('a 404 version_not_found: message and headers agree', () => {
  it('the latest version its message names is the one in its ledger headers, after the node moved on', async () => {
    const node = await sim();
    const { url } = await proxy([node], { routing: QUIET_ROUTING });
    for (const advance of [0, 3, 2]) {
      node.ledger.advance(advance);
      const reply = await rawItem(url, KEY_HEX, { version: 2000 });
      expect(reply.status).toBe(404);
      const named = /latest version is (\d+)/.exec(reply.json().message)?.[1];
      expect(named).toBe(String(node.ledger.info().ledgerVersion));
      expect(reply.headers['x-node-ledger-version']).toBe(named);
    }
  });
});
