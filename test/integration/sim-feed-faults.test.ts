// The feed's fault modes (SimFaults.set with a feed mode): each page holds what its
// mode says at the versions in its range, or on the next page only, and nothing else
// changes; other routes are never faulted by them.
import { describe, expect, it } from 'vitest';
import { simVersionKind, type SimNode } from '../../src/sim/index.js';
import { expectError } from '../helpers/expect.js';
import {
  aptosHash,
  delimitByHashes,
  FeedReadError,
  readFeedPage,
  transactionStarts,
  type FeedTransaction,
} from '../helpers/feed-page.js';
import { call, sparseSim, versionOf, type Reply } from '../helpers/proxy.js';

const feed = (node: SimNode, query: string): Promise<Reply> =>
  call(node.url, `/v1/transactions${query}`, { headers: { accept: 'application/x-bcs' } });
const page = async (node: SimNode, query: string): Promise<FeedTransaction[]> =>
  readFeedPage((await feed(node, query)).body);
const badHashes = (txns: FeedTransaction[], which: 'transaction' | 'state_change'): bigint[] =>
  txns
    .filter((t) =>
      which === 'transaction'
        ? !t.transactionHash.equals(aptosHash('Transaction', t.transaction))
        : !t.stateChangeHash.equals(aptosHash('WriteSet', t.writeSet)),
    )
    .map((t) => t.version);

/** The first user transaction at or after `version`. */
function userAt(version: bigint): bigint {
  let v = version;
  while (simVersionKind(v).kind !== 'user') v++;
  return v;
}

function readError(body: Buffer): FeedReadError {
  try {
    readFeedPage(body);
  } catch (err) {
    if (err instanceof FeedReadError) return err;
    throw err;
  }
  throw new Error('the page read whole');
}

describe('feed fault modes', () => {
  it('feedTransactionHash and feedStateChangeHash: that hash wrong at the versions in range, until cleared', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    for (const [mode, which] of [
      ['feedTransactionHash', 'transaction'],
      ['feedStateChangeHash', 'state_change'],
    ] as const) {
      node.faults.set({ mode, range: { from: 2010n, to: 2011n } });
      expect(badHashes(await page(node, '?start=2000&limit=20'), which)).toEqual([2010n, 2011n]);
      expect(badHashes(await page(node, '?start=2011&limit=5'), which)).toEqual([2011n]);
      expect(badHashes(await page(node, '?start=2012&limit=20'), which)).toEqual([]);
      node.faults.clear();
      expect(badHashes(await page(node, '?start=2000&limit=20'), which)).toEqual([]);
    }
    expect(badHashes(await page(node, '?start=2000&limit=20'), 'transaction')).toEqual([]);
  });

  it('without a range, for the next page only: its first version; the page asked again is whole', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    node.faults.set({ mode: 'feedTransactionHash', count: 1 });
    // Other routes neither see the fault nor use it up.
    expect((await call(node.url, '/v1')).status).toBe(200);
    expect((await call(node.url, '/v1/transactions?start=2000&limit=3')).status).toBe(200);
    expect(badHashes(await page(node, '?start=2000&limit=10'), 'transaction')).toEqual([2000n]);
    expect(badHashes(await page(node, '?start=2000&limit=10'), 'transaction')).toEqual([]);
    expect(node.counters.byRoute.feed).toBe(2);
  });

  it('feedUnknownVariant: an authenticator or event variant no reader knows, still delimited by hash', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    for (const variant of ['authenticator', 'event'] as const) {
      const at = userAt(2005n);
      node.faults.set({ mode: 'feedUnknownVariant', variant, range: { from: at, to: at } });
      const body = (await feed(node, '?start=2000&limit=20')).body;
      const error = readError(body);
      expect([error.reason, error.version]).toEqual(['unknown_variant', at]);
      expect(error.message).toContain(variant === 'authenticator' ? 'TransactionAuthenticator' : 'ContractEvent');
      const starts = transactionStarts(body);
      const start = starts[Number(at - 2000n)];
      const found = delimitByHashes(body, start);
      expect(found, `${variant} delimited`).not.toBeNull();
      // What follows is the next transaction, whole: version at+1.
      expect(body.readBigUInt64LE(found?.end ?? 0)).toBe(at + 1n);
      node.faults.clear();
    }
  });

  it('feedUnknownVariant: a transaction info or write op of an unknown kind, which no hash delimits', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    for (const [variant, what] of [
      ['transaction_info', 'TransactionInfo'],
      ['write_op', 'WriteOp'],
    ] as const) {
      node.faults.set({ mode: 'feedUnknownVariant', variant, count: 1 });
      const body = (await feed(node, '?start=2004&limit=4')).body;
      const error = readError(body);
      expect([error.reason, error.version, error.message.includes(what)]).toEqual(['unknown_variant', 2004n, true]);
      expect(delimitByHashes(body, transactionStarts(body)[0])).toBeNull();
    }
    expect((await page(node, '?start=2004&limit=4')).map((t) => t.version)).toEqual([2004n, 2005n, 2006n, 2007n]);
  });

  it('feedGap: a page that leaves out a version, or starts one after its start', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    node.faults.set({ mode: 'feedGap', range: { from: 2003n, to: 2003n } });
    expect((await page(node, '?start=2000&limit=6')).map((t) => t.version)).toEqual([
      2000n,
      2001n,
      2002n,
      2004n,
      2005n,
    ]);
    expect((await page(node, '?start=2010&limit=3')).map((t) => t.version)).toEqual([2010n, 2011n, 2012n]);
    node.faults.set({ mode: 'feedGap', count: 1 });
    expect((await page(node, '?start=2000&limit=3')).map((t) => t.version)).toEqual([2000n, 2002n]);
    node.faults.set({ mode: 'feedGap', gap: 'shift', count: 1 });
    expect((await page(node, '?start=2000&limit=3')).map((t) => t.version)).toEqual([2001n, 2002n, 2003n]);
    expect((await page(node, '?start=2000&limit=3')).map((t) => t.version)).toEqual([2000n, 2001n, 2002n]);
  });

  it('feedPruned: 410 version_pruned for the start (500 internal_error as older nodes), the oldest version above it', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    node.faults.set({ mode: 'feedPruned', range: { from: 2000n, to: 2100n } });
    const gone = await feed(node, '?start=2050&limit=5');
    expectError(gone, 410, 'version_pruned', { ledgerHeaders: true });
    expect(gone.headers['x-node-ledger-oldest-version']).toBe('2051');
    expect((await page(node, '?start=2101&limit=5')).map((t) => t.version)[0]).toBe(2101n);
    node.faults.set({ mode: 'feedPruned', status: 500, count: 1 });
    expectError(await feed(node, '?start=2050&limit=5'), 500, 'internal_error', { ledgerHeaders: true });
    expect((await feed(node, '?start=2050&limit=5')).status).toBe(200);
  });

  it('feedForged: a page that verifies and lies: the versions in range wrote nothing, their hashes made to match', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    const honest = await page(node, '?start=2000&limit=20');
    const writing = honest.filter((t) => t.writes.length > 0).map((t) => t.version);
    expect(writing.length).toBeGreaterThan(2);
    const [from, to] = [writing[0]!, writing[1]!];
    node.faults.set({ mode: 'feedForged', range: { from, to } });
    const forged = await page(node, '?start=2000&limit=20');
    expect(badHashes(forged, 'transaction')).toEqual([]);
    expect(badHashes(forged, 'state_change')).toEqual([]);
    expect(forged.filter((t) => t.writes.length > 0).map((t) => t.version)).toEqual(
      writing.filter((v) => v < from || v > to),
    );
    // The rest of each transaction is what the node holds.
    expect(forged.map((t) => t.transaction.toString('hex'))).toEqual(honest.map((t) => t.transaction.toString('hex')));
    node.faults.clear();
    expect(
      (await feed(node, '?start=2000&limit=20')).body.equals((await feed(node, '?start=2000&limit=20')).body),
    ).toBe(true);
    expect((await page(node, '?start=2000&limit=20')).map((t) => t.writes.length)).toEqual(
      honest.map((t) => t.writes.length),
    );
  });

  it('feedLag: the page and ledger headers of a node that many versions behind', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    node.faults.set({ mode: 'feedLag', versions: 30n });
    const lagging = await feed(node, '?start=2960&limit=100');
    expect(versionOf(lagging)).toBe(2970n);
    expect(
      readFeedPage(lagging.body)
        .map((t) => t.version)
        .at(-1),
    ).toBe(2970n);
    expectError(await feed(node, '?start=2980&limit=5'), 400, 'invalid_input', { ledgerHeaders: true });
    node.faults.clear();
    const current = await feed(node, '?start=2960&limit=100');
    expect(versionOf(current)).toBe(3000n);
    expect(
      readFeedPage(current.body)
        .map((t) => t.version)
        .at(-1),
    ).toBe(3000n);
  });
});
