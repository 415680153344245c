// Upstream failover (api.md §7 "Failures", DESIGN "upstream/"): a node that is killed,
// hangs, or answers something that is not a node answer is retried on another node
// within the deadline; a node's own JSON 500 is passed through only when no other
// node answers; when every node fails the client gets one 503 internal_error that
// says what happened on each node.
import { describe, expect, it } from 'vitest';
import { simTableItem, type SimFaultMode, type SimNode } from '../../src/sim/index.js';
import { HANDLE, ledgerHeaders, proxy, rawItem, sim, viewJson, type Reply, QUIET_ROUTING } from '../helpers/proxy.js';
import { expectUnavailable } from '../helpers/expect.js';
import { hex } from '../helpers/cache.js';
import { until } from '../helpers/until.js';

const KEYS = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 5])).filter(
  (k) => simTableItem(HANDLE, k, 0n) !== null,
);
const KEY = KEYS[0];
const reads = (node: SimNode): number => node.counters.byRoute.raw_item + node.counters.byRoute.view;

/** Probes only at start, unless a test asks for more. */

/**
 * Two nodes; the first is one version ahead, so while both are idle it is the one
 * the router picks first (least in-flight ties go to the more advanced node).
 */
async function pair(
  routing: Record<string, unknown> = {},
): Promise<{ first: SimNode; second: SimNode; url: string; app: Awaited<ReturnType<typeof proxy>>['app'] }> {
  const first = await sim();
  const second = await sim();
  first.ledger.advance(1);
  const { app, url } = await proxy([first, second], { routing: { ...QUIET_ROUTING, ...routing } });
  return { first, second, url, app };
}

function expectUnavailableAnswer(reply: Reply, parts: string[]): string {
  const message = expectUnavailable(reply, parts);
  expect(reply.headers['x-cache']).not.toBe('HIT');
  return message;
}

describe('upstream failover', () => {
  it('a node killed mid-test (stop): reads keep succeeding via the other, no 5xx; after restart it serves again', async () => {
    // openMs short enough that the restarted node's circuit half-opens within the wait below.
    const { first, second, url, app } = await pair({ probeIntervalMs: 100, breaker: { openMs: 1000 } });
    const statuses: number[] = [];
    let served = 0;
    let stopped: Promise<void> | null = null;
    // Four clients read in a loop; the first node is killed while reads are in flight.
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; i < 20; i++) {
        const n = w * 20 + i;
        if (n === 30 && stopped === null) stopped = first.stop();
        const key = KEYS[n % KEYS.length];
        const reply = i % 2 === 0 ? await rawItem(url, hex(key)) : await rawItem(url, hex(key), { version: 100 + n });
        statuses.push(reply.status);
        if (reply.status === 200) served++;
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    await stopped;
    expect(
      statuses.filter((s) => s >= 500),
      `statuses: ${statuses.join(',')}`,
    ).toEqual([]);
    expect(served).toBe(80);
    expect(second.counters.byRoute.raw_item).toBeGreaterThan(0);

    // Every read after the stop went to the second node.
    const before = second.counters.byRoute.raw_item;
    for (let i = 0; i < 5; i++) expect((await rawItem(url, hex(KEYS[i]), { version: 300 + i })).status).toBe(200);
    expect(second.counters.byRoute.raw_item).toBe(before + 5);
    const view = await viewJson(url, '0x1::sim::add', ['1', '2']);
    expect(view.status).toBe(200);
    expect(view.json()).toEqual(['3']);

    // Restarted: once a probe sees it, the first node (more advanced) takes reads again.
    await first.restart();
    const firstBefore = first.counters.byRoute.raw_item;
    let n = 0;
    await until(
      async () => {
        expect((await rawItem(url, hex(KEY), { version: 400 + n++ })).status).toBe(200);
        return first.counters.byRoute.raw_item > firstBefore;
      },
      5000,
      'the restarted node serving again',
    );
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
  });

  it("a hung node ('hang', attemptTimeoutMs 300, deadlineMs 2000): answered by the other within the deadline", async () => {
    const { first, second, url } = await pair({ attemptTimeoutMs: 300, deadlineMs: 2000 });
    first.faults.set({ mode: 'hang', routes: ['raw_item', 'view'] });
    const cases: Array<[string, () => Promise<Reply>, (r: Reply) => void]> = [
      [
        'raw_item latest',
        () => rawItem(url, hex(KEY)),
        (r) => expect(r.body).toEqual(simTableItem(HANDLE, KEY, 1000n)),
      ],
      [
        'raw_item pinned',
        () => rawItem(url, hex(KEY), { version: 990 }),
        (r) => expect(r.body).toEqual(simTableItem(HANDLE, KEY, 990n)),
      ],
      ['view latest', () => viewJson(url, '0x1::sim::add', ['1', '2']), (r) => expect(r.json()).toEqual(['3'])],
      [
        'view pinned',
        () => viewJson(url, '0x1::sim::add', ['1', '2'], { version: 990 }),
        (r) => expect(r.json()).toEqual(['3']),
      ],
    ];
    for (const [label, read, check] of cases) {
      const before = reads(first);
      const started = performance.now();
      const reply = await read();
      const elapsed = performance.now() - started;
      expect(reply.status, `${label}: ${reply.body.toString()}`).toBe(200);
      check(reply);
      expect(reads(first), `${label}: the hung node was tried first`).toBe(before + 1);
      expect(elapsed, label).toBeGreaterThanOrEqual(280);
      expect(elapsed, label).toBeLessThan(2000);
    }
    expect(reads(second)).toBe(4);
  });

  const retried: Array<[SimFaultMode, string]> = [
    ['html', 'an HTML 502 from something in front of the node'],
    ['reset', 'a connection reset'],
    ['empty', 'an empty 503'],
    ['status429', 'a 429'],
    ['status500', "the node's own JSON 500"],
  ];
  for (const [mode, what] of retried) {
    it(`${what} ('${mode}') is retried on another node: the client gets 200`, async () => {
      const { first, second, url } = await pair();
      first.faults.set({ mode, routes: ['raw_item', 'view'] });
      const latest = await rawItem(url, hex(KEY));
      expect(latest.status, latest.body.toString()).toBe(200);
      expect(latest.body).toEqual(simTableItem(HANDLE, KEY, 1000n));
      expect(ledgerHeaders(latest)['x-node-ledger-version']).toBe('1000');
      const pinned = await viewJson(url, '0x1::sim::add', ['4', '5'], { version: 990 });
      expect(pinned.status, pinned.body.toString()).toBe(200);
      expect(pinned.json()).toEqual(['9']);
      expect(pinned.headers['content-type']).toMatch(/^application\/json/);
      expect(reads(first), 'the faulty node was tried first').toBe(2);
      expect(reads(second)).toBe(2);
    });
  }

  it("a node's JSON 500 is passed through when no other node answers; it is not cached", async () => {
    const { first, second, url } = await pair();
    first.faults.set({ mode: 'status500', routes: ['raw_item', 'view'] });
    await second.stop();
    for (const read of [
      () => rawItem(url, hex(KEY), { version: 990 }),
      () => viewJson(url, '0x1::sim::add', ['1', '2']),
    ]) {
      const reply = await read();
      expect(reply.status, reply.body.toString()).toBe(500);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.body.toString()).toBe(
        '{"message":"Internal error: simulated failure","error_code":"internal_error","vm_error_code":null}',
      );
      expect(reply.headers['x-cache']).not.toBe('HIT');
    }
    // Not cached: once the node recovers, the same pinned read reaches it and succeeds.
    first.faults.clear();
    const before = first.counters.byRoute.raw_item;
    const ok = await rawItem(url, hex(KEY), { version: 990 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(simTableItem(HANDLE, KEY, 990n));
    expect(first.counters.byRoute.raw_item).toBe(before + 1);
  });
});

describe('upstream failover: every node failing', () => {
  it('both killed → one 503 internal_error whose message lists both nodes', async () => {
    const { first, second, url } = await pair();
    await first.stop();
    await second.stop();
    for (const reply of [
      await rawItem(url, hex(KEY)),
      await rawItem(url, hex(KEY), { version: 990 }),
      await viewJson(url, '0x1::sim::add', ['1', '2']),
    ]) {
      const message = expectUnavailableAnswer(reply, ['node0', 'node1', 'connection refused']);
      expect(message).toMatch(/node0[^;]*connection refused/);
      expect(message).toMatch(/node1[^;]*connection refused/);
      // A proxy-made error carries the freshest snapshot the proxy knows.
      expect(ledgerHeaders(reply)['x-node-ledger-version']).toBe('1001');
    }
  });

  it('both answering HTML 502s → 503 naming both nodes and what they answered', async () => {
    const { first, second, url } = await pair();
    first.faults.set({ mode: 'html', routes: ['raw_item', 'view'] });
    second.faults.set({ mode: 'html', routes: ['raw_item', 'view'] });
    const message = expectUnavailableAnswer(await rawItem(url, hex(KEY), { version: 990 }), [
      'node0',
      'node1',
      'HTTP 502',
    ]);
    expect(message).toMatch(/node0[^;]*502/);
    expect(message).toMatch(/node1[^;]*502/);
    expect(reads(first)).toBe(1);
    expect(reads(second)).toBe(1);
  });

  it('both hung → 503 naming both timeouts, within the deadline', async () => {
    const { first, second, url } = await pair({ attemptTimeoutMs: 300, deadlineMs: 2000 });
    first.faults.set({ mode: 'hang', routes: ['raw_item', 'view'] });
    second.faults.set({ mode: 'hang', routes: ['raw_item', 'view'] });
    const started = performance.now();
    const message = expectUnavailableAnswer(await viewJson(url, '0x1::sim::add', ['1', '2']), [
      'node0',
      'node1',
      'timed out after 300 ms',
    ]);
    const elapsed = performance.now() - started;
    expect(message).toMatch(/node0[^;]*timed out/);
    expect(message).toMatch(/node1[^;]*timed out/);
    expect(elapsed).toBeGreaterThanOrEqual(580);
    expect(elapsed).toBeLessThan(2000);
  });

  it('the deadline bounds the whole read: three hung nodes, deadlineMs 500 → 503 in about 500 ms', async () => {
    const nodes = [await sim(), await sim(), await sim()];
    for (const node of nodes) node.faults.set({ mode: 'hang', routes: ['raw_item'] });
    const { url } = await proxy(nodes, { routing: { ...QUIET_ROUTING, attemptTimeoutMs: 300, deadlineMs: 500 } });
    const started = performance.now();
    const reply = await rawItem(url, hex(KEY), { version: 990 });
    const elapsed = performance.now() - started;
    expectUnavailableAnswer(reply, ['timed out']);
    // It waited for the deadline (never less), and the deadline ended it: a loose
    // upper bound, since a busy machine only ever makes it later.
    expect(elapsed).toBeGreaterThanOrEqual(480);
    expect(elapsed).toBeLessThan(3 * 500);
  });
});
