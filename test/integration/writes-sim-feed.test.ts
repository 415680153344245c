// The reader (src/writes/) on the simulated node's BCS feed, whose encoder is the sim's
// own (src/sim/feed/): two encoders of one layout that must agree. Every page of the
// sparse model decodes and verifies to exactly the keys the model wrote at each version,
// and each of the feed's fault modes gives the reader's reason and claims nothing after it.
import { describe, expect, it } from 'vitest';
import { type SimNode, simVersionKind } from '../../src/sim/index.js';
import { decodeTransactionPage } from '../../src/writes/page.js';
import { FeedPageError, type VerifiedTransaction } from '../../src/writes/verified.js';
import { call, sparseSim } from '../helpers/proxy.js';

const body = async (node: SimNode, start: bigint, limit = 100): Promise<Buffer> => {
  const reply = await call(node.url, `/v1/transactions?start=${start}&limit=${limit}`, {
    headers: { accept: 'application/x-bcs' },
  });
  expect(reply.status).toBe(200);
  return reply.body;
};

function failure(page: Buffer, start: bigint): FeedPageError {
  try {
    decodeTransactionPage(page, start);
  } catch (err) {
    if (err instanceof FeedPageError) return err;
    throw err;
  }
  throw new Error('the page was claimed');
}

/** The first user transaction at or after `version`. */
function userAt(version: bigint): bigint {
  let v = version;
  while (simVersionKind(v).kind !== 'user') v++;
  return v;
}

const keysOf = (t: VerifiedTransaction) => t.writes.map((w) => w.key.toString('hex')).sort();

describe('the reader on the sim’s feed', () => {
  it('decodes and verifies every page to exactly the keys the model wrote at each version', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    const model = node.writes!;
    let writes = 0;
    for (let start = 0n; start < 3000n; start += 100n) {
      const decoded = decodeTransactionPage(await body(node, start), start);
      expect(decoded.map((t) => t.version)).toEqual(Array.from({ length: 100 }, (_, i) => start + BigInt(i)));
      for (const t of decoded) {
        const expected = model.writesAt(t.version);
        expect(keysOf(t), `version ${t.version}`).toEqual(expected.map((w) => w.key.stateKey.toString('hex')).sort());
        for (const w of t.writes) {
          const key = expected.find((e) => e.key.stateKey.equals(w.key))!.key;
          // An AccessPath key names its account (or object, or 0x1): the model's owner of it.
          if (w.address !== undefined) expect(w.address).toBe(key.owner);
        }
        writes += t.writes.length;
      }
    }
    expect(writes).toBeGreaterThan(1000);
  });

  it('an unknown authenticator or event variant is delimited by hash: the page reads whole', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    for (const variant of ['authenticator', 'event'] as const) {
      const at = userAt(2005n);
      node.faults.set({ mode: 'feedUnknownVariant', variant, range: { from: at, to: at } });
      const decoded = decodeTransactionPage(await body(node, 2000n, 20), 2000n);
      expect(decoded.length).toBe(20);
      expect(keysOf(decoded[Number(at - 2000n)]!)).toEqual(
        node
          .writes!.writesAt(at)
          .map((w) => w.key.stateKey.toString('hex'))
          .sort(),
      );
      node.faults.clear();
    }
  });

  it.each([
    ['feedTransactionHash', {}, ['transaction_hash']],
    ['feedStateChangeHash', {}, ['state_change_hash']],
    ['feedUnknownVariant', { variant: 'transaction_info' }, ['unknown_variant']],
    ['feedUnknownVariant', { variant: 'write_op' }, ['unknown_variant']],
  ] as const)('%s %j: %j at that version, the versions before it verified', async (mode, more, reasons) => {
    const node = await sparseSim({}, { startVersion: 3000n });
    const at = userAt(2005n);
    node.faults.set({ mode, ...more, range: { from: at, to: at } });
    const err = failure(await body(node, 2000n, 20), 2000n);
    expect(reasons).toContain(err.reason);
    expect({ version: err.version, kept: err.verifiedPrefix.length }).toEqual({
      version: at,
      kept: Number(at - 2000n),
    });
  });

  it('a page that leaves out a version or starts after its start: not_contiguous', async () => {
    const node = await sparseSim({}, { startVersion: 3000n });
    node.faults.set({ mode: 'feedGap', range: { from: 2003n, to: 2003n } });
    expect(failure(await body(node, 2000n, 6), 2000n)).toMatchObject({ reason: 'not_contiguous', version: 2003n });
    node.faults.set({ mode: 'feedGap', gap: 'shift', count: 1 });
    expect(failure(await body(node, 2010n, 3), 2010n)).toMatchObject({ reason: 'not_contiguous', version: 2010n });
  });
});
