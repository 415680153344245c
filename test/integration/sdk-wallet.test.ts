// The real Aptos TS SDK (6.3.x) reads wallet data through the proxy:
// each pinned or immutable read, called twice, reaches the node once. The reads
// SDK 6.3.1 sends without a version are latest reads: both calls reach the node,
// and the answer is stored as the pinned one at its version.
import { Aptos, AptosConfig, Network } from '@aptos-labs/ts-sdk';
import { beforeEach, describe, expect, it } from 'vitest';
import { simTableItem, simTransactionHash, type SimNode } from '../../src/sim/index.js';
import { call, proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';

const START = 1000n;
const PINNED = 990;
const HANDLE = '0x' + 'ab'.repeat(32);

/** A u64 key the sim's table holds at PINNED, as the decimal string the SDK sends. */
function presentKey(): string {
  for (let n = 0n; n < 64n; n++) {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(n);
    if (simTableItem(HANDLE, bytes, BigInt(PINNED)) !== null) return String(n);
  }
  throw new Error('no present key among the first 64');
}

describe('Aptos TS SDK wallet reads through the proxy (vendor aptos)', () => {
  let node: SimNode;
  let aptos: Aptos;
  let base: string;

  beforeEach(async () => {
    node = await sim({ vendor: 'aptos', chainId: 4, startVersion: START });
    const p = await proxy([node], { vendor: 'aptos', routing: QUIET_ROUTING });
    base = p.url;
    aptos = new Aptos(new AptosConfig({ network: Network.CUSTOM, fullnode: `${base}/v1` }));
  });

  /** Runs `read` twice; returns both results and how many requests reached the node. */
  async function twice<T>(read: () => Promise<T>): Promise<{ first: T; second: T; calls: number }> {
    const before = node.counters.total;
    const first = await read();
    const second = await read();
    return { first, second, calls: node.counters.total - before };
  }

  // What the SDK returns of the node's JSON: the resource's data, else all of it.
  it.each([
    [
      'getAccountResource (ledgerVersion)',
      (a: Aptos) =>
        a.getAccountResource({
          accountAddress: '0x1',
          resourceType: '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>',
          options: { ledgerVersion: PINNED },
        }),
    ],
    [
      'getAccountModule (ledgerVersion)',
      (a: Aptos) =>
        a.getAccountModule({ accountAddress: '0x1', moduleName: 'sim', options: { ledgerVersion: PINNED } }),
    ],
    [
      'getTableItem (ledgerVersion)',
      (a: Aptos) =>
        a.getTableItem({
          handle: HANDLE,
          data: { key_type: 'u64', value_type: 'u64', key: presentKey() },
          options: { ledgerVersion: PINNED },
        }),
    ],
    ['getTransactionByVersion', (a: Aptos) => a.getTransactionByVersion({ ledgerVersion: 900 })],
    ['getTransactionByHash', (a: Aptos) => a.getTransactionByHash({ transactionHash: simTransactionHash(4, 900n) })],
    ['getBlockByHeight', (a: Aptos) => a.getBlockByHeight({ blockHeight: 200 })],
    [
      'getBlockByHeight (withTransactions)',
      (a: Aptos) => a.getBlockByHeight({ blockHeight: 200, options: { withTransactions: true } }),
    ],
  ] as Array<[string, (a: Aptos) => Promise<unknown>]>)(
    '%s: the second call does not reach the node, and both equal the node',
    async (_name, read) => {
      const { first, second, calls } = await twice(() => read(aptos));
      expect(calls).toBe(1);
      expect(second).toEqual(first);
      // What the node answers for the same request, straight.
      const sent = node.counters.requests.at(-1)!;
      const direct = await call(node.url, sent.url, {
        method: sent.method as 'GET' | 'POST',
        headers: { 'content-type': 'application/json' },
        body: sent.method === 'POST' ? sent.body : undefined,
      });
      const nodeJson = direct.json();
      expect(first).toEqual(sent.url.includes('/resource/') ? nodeJson.data : nodeJson);
    },
  );

  it.each([
    [
      'getAccountInfo',
      (a: Aptos): Promise<unknown> => a.getAccountInfo({ accountAddress: '0x1' }),
      (v: bigint) => `/v1/accounts/0x1?ledger_version=${v}`,
    ],
    [
      'getAccountResources',
      (a: Aptos): Promise<unknown> => a.getAccountResources({ accountAddress: '0x1' }),
      (v: bigint) => `/v1/accounts/0x1/resources?ledger_version=${v}&limit=999`,
    ],
    [
      'getAccountModules',
      (a: Aptos): Promise<unknown> => a.getAccountModules({ accountAddress: '0x1' }),
      (v: bigint) => `/v1/accounts/0x1/modules?ledger_version=${v}&limit=1000`,
    ],
  ] as const)(
    '%s sends no version: both calls reach the node, and the answer is stored as pinned',
    async (_name, read, pinnedPath) => {
      const { first, second, calls } = await twice(() => read(aptos));
      expect(second).toEqual(first);
      expect(calls).toBe(2);
      for (const r of node.counters.requests.slice(-2)) expect(r.url).not.toContain('ledger_version');
      // The same read pinned at the version it was read at is a hit.
      const before = node.counters.total;
      const pinned = await call(base, pinnedPath(START));
      expect([pinned.status, pinned.headers['x-cache']]).toEqual([200, 'HIT']);
      expect(node.counters.total).toBe(before);
    },
  );
});
