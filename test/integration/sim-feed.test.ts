// The simulated node's BCS transaction feed, over HTTP: pages as a node answers them
// (aptos-core api/src/transactions.rs), every transaction verified by its hashes, and
// each version's write set exactly the keys whose pinned answers change there.
import { describe, expect, it } from 'vitest';
import { SIM_TRANSACTIONS_PAGE_SIZE, simVersionKind, type SimNode } from '../../src/sim/index.js';
import { expectError } from '../helpers/expect.js';
import { aptosHash, readFeedPage } from '../helpers/feed-page.js';
import { call, proxy, QUIET, sim, sparseSim, versionOf, type Reply } from '../helpers/proxy.js';

const BCS = { accept: 'application/x-bcs' };
const feed = (node: SimNode, query: string): Promise<Reply> =>
  call(node.url, `/v1/transactions${query}`, { headers: BCS });
const versions = (reply: Reply): bigint[] => readFeedPage(reply.body).map((t) => t.version);
const range = (from: bigint, to: bigint): bigint[] =>
  Array.from({ length: Number(to - from + 1n) }, (_, i) => from + BigInt(i));

describe('the BCS feed: GET /v1/transactions with Accept application/x-bcs', () => {
  it('answers bcs(Vec<TransactionOnChainData>) for start … start+limit-1, with the ledger headers, counted as route feed', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    const page = await feed(node, '?start=2000&limit=10');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('application/x-bcs');
    expect(versionOf(page)).toBe(3000n);
    expect(page.headers['x-node-ledger-oldest-version']).toBe('0');
    expect(versions(page)).toEqual(range(2000n, 2009n));
    expect(node.counters.byRoute.feed).toBe(1);
    expect(node.counters.byRoute.transactions).toBe(0);
    const json = await call(node.url, '/v1/transactions?start=2000&limit=2');
    expect(json.json().map((t: { version: string }) => t.version)).toEqual(['2000', '2001']);
    expect(node.counters.byRoute.transactions).toBe(1);
  });

  it('clamps to the latest version and to a page of 100; without start, the last page; without limit, 25', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    expect(versions(await feed(node, '?start=2990&limit=50'))).toEqual(range(2990n, 3000n));
    expect(versions(await feed(node, '?start=100&limit=1000'))).toHaveLength(SIM_TRANSACTIONS_PAGE_SIZE);
    expect(versions(await feed(node, '?limit=5'))).toEqual(range(2996n, 3000n));
    expect(versions(await feed(node, '?start=10'))).toEqual(range(10n, 34n));
    expect(versions(await feed(node, '?start=3000&limit=1'))).toEqual([3000n]);
  });

  it('refuses a limit of 0 and a start beyond the latest (400 invalid_input), a pruned start (410), with the ledger headers', async () => {
    const node = await sparseSim({}, { startVersion: 3000n, pruneWindow: 1000n });
    expectError(await feed(node, '?start=2500&limit=0'), 400, 'invalid_input', { ledgerHeaders: true });
    const beyond = expectError(await feed(node, '?start=3001'), 400, 'invalid_input', { ledgerHeaders: true });
    expect(beyond.message).toContain('3001');
    expectError(await feed(node, '?start=1999'), 410, 'version_pruned', { ledgerHeaders: true });
    expect(versions(await feed(node, '?start=2000&limit=1'))).toEqual([2000n]);
    // A query that does not parse is refused before the ledger is read.
    expectError(await feed(node, '?start=-1'), 400, 'web_framework_error', { ledgerHeaders: false });
    expectError(await feed(node, '?limit=70000'), 400, 'web_framework_error', { ledgerHeaders: false });
  });

  it('in the period model there are no write sets to give: 403 api_disabled, as a node with BCS output off', async () => {
    const node = await sim();
    const refused = expectError(await feed(node, '?start=900&limit=2'), 403, 'api_disabled', { ledgerHeaders: false });
    expect(refused.message).toBe('Get transactions with BCS output is disabled on this endpoint');
    expect(node.counters.byRoute.feed).toBe(1);
    expect((await call(node.url, '/v1/transactions?start=900&limit=2')).status).toBe(200);
  });

  it('the proxy config’s sim.writes chooses the built-in node’s model; the feed passes through the proxy', async () => {
    const sparse = { model: 'sparse', accounts: 4, objects: 1, tables: 1, tableKeys: 2, writeRate: 0.05 };
    const { app, url } = await proxy([{ url: 'sim', name: 'sim' }], { ...QUIET, sim: { port: 0, writes: sparse } });
    const node = app.sim as SimNode;
    expect(node.writes?.universe.accounts).toHaveLength(4);
    const direct = await feed(node, '?start=1&limit=3');
    const through = await call(url, '/v1/transactions?start=1&limit=3', { headers: BCS });
    expect([through.status, through.body]).toEqual([200, direct.body]);
    const period = await proxy([{ url: 'sim', name: 'sim' }], { ...QUIET, sim: { port: 0 } });
    expect(period.app.sim?.writes).toBeNull();
  });

  it('every transaction verifies by its hashes; blocks are metadata, user transactions and an epilogue', async () => {
    const node = await sparseSim({}, { startVersion: 5000n });
    for (const start of [0n, 1000n, 4901n]) {
      const page = readFeedPage((await feed(node, `?start=${start}&limit=100`)).body);
      expect(page).toHaveLength(100);
      for (const t of page) {
        expect(t.transactionHash, `transaction_hash at ${t.version}`).toEqual(aptosHash('Transaction', t.transaction));
        expect(t.stateChangeHash, `state_change_hash at ${t.version}`).toEqual(aptosHash('WriteSet', t.writeSet));
        const kind = simVersionKind(t.version).kind;
        expect(t.kind).toBe({ metadata: 'block_metadata_ext', user: 'user', epilogue: 'block_epilogue' }[kind]);
        if (kind === 'epilogue') expect(t.writes).toEqual([]);
        const keys = t.writes.map((w) => w.stateKey);
        expect(keys).toEqual([...keys].sort(Buffer.compare));
        for (const w of t.writes) expect(node.writes?.keyOf(w.stateKey), 'a universe key').toBeDefined();
      }
      expect(page.some((t) => t.events > 0)).toBe(true);
    }
  });
});

/** The node's pinned answer for a StateKey (state_values/raw): its bytes, or null for a 404. */
async function pinned(node: SimNode, stateKey: Buffer, version: bigint): Promise<Buffer | null> {
  const reply = await call(node.url, `/v1/experimental/state_values/raw?ledger_version=${version}`, {
    headers: { 'content-type': 'application/json', ...BCS },
    body: JSON.stringify({ key: '0x' + stateKey.toString('hex') }),
  });
  if (reply.status === 404) {
    expectError(reply, 404, 'state_value_not_found');
    return null;
  }
  expect(reply.status).toBe(200);
  return reply.body;
}

describe('write sets list exactly the keys whose pinned answers change', () => {
  it('over 40 versions, for every key of a small universe, read through HTTP at v-1 and v', async () => {
    const node = await sparseSim(
      { accounts: 6, objects: 3, tables: 2, tableKeys: 6, writeRate: 0.1, hotShare: 0.1 },
      { startVersion: 2000n },
    );
    const model = node.writes;
    if (model === null) throw new Error('a sparse sim has its model');
    const keys = model.universe.keys;
    // Around a write that leaves a deleted key deleted: a version that writes it, yet must not list it.
    const noOp = range(1000n, 1999n).find((v) =>
      keys.some(
        (k) => model.lastWriteAt(k, v) === v && model.stateAt(k, v - 1n) === null && model.stateAt(k, v) === null,
      ),
    );
    expect(noOp).toBeDefined();
    const from = (noOp as bigint) - 20n;
    const to = from + 39n;
    const page = readFeedPage((await feed(node, `?start=${from}&limit=${to - from + 1n}`)).body);
    expect(page.map((t) => t.version)).toEqual(range(from, to));
    const answers = new Map<bigint, Array<Buffer | null>>();
    for (const v of range(from - 1n, to))
      answers.set(v, await Promise.all(keys.map((k) => pinned(node, k.stateKey, v))));
    const ops = new Set<string>();
    let written = 0;
    for (const t of page) {
      const before = answers.get(t.version - 1n) ?? [];
      const after = answers.get(t.version) ?? [];
      const changed = keys.filter(
        (_, i) => !(before[i] === null ? after[i] === null : after[i]?.equals(before[i] as Buffer)),
      );
      expect(t.writes.map((w) => w.stateKey.toString('hex')).sort(), `write set at ${t.version}`).toEqual(
        changed.map((k) => k.stateKey.toString('hex')).sort(),
      );
      for (const w of t.writes) {
        const i = keys.findIndex((k) => k.stateKey.equals(w.stateKey));
        expect(w.value, `the value written at ${t.version}`).toEqual(after[i]);
        expect(w.op === 'creation').toBe(before[i] === null);
        ops.add(w.op);
        written++;
      }
    }
    expect(written).toBeGreaterThan(40);
    expect([...ops].sort()).toEqual(['creation', 'deletion', 'modification']);
  });
});
