// Every cached route family against the sim (api.md §9): a
// repeated read does not reach the node and is byte-identical to the node's
// answer, cursor included; deterministic 404s are cached and the others are not;
// pruning answers 410; JSON and BCS are separate entries; Redis is shared.
import { Redis } from 'ioredis';
import { request } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import { simTableItem, simTransactionHash, type SimNode } from '../../src/sim/index.js';
import { ManualProbes } from '../helpers/probes.js';
import { call, proxy, sim, type Reply, QUIET_ROUTING } from '../helpers/proxy.js';
import { flushAll, useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const START = 1000n;
const PINNED = 990n;
const HANDLE = '0x' + 'ab'.repeat(32);
const MISSING_ACCOUNT = '0x' + '00'.repeat(31) + '08';
const CURSOR = 'x-node-cursor';

interface Request {
  path: string;
  body?: unknown;
}

interface Case {
  family: string;
  name: string;
  /** the request; `version` null: a latest read (pinned routes only) */
  request(version: bigint | null): Request;
  /** path routes have no ledger_version */
  byPath?: true;
  /** a BCS answer exists (state_values/raw is BCS only) */
  json?: false;
}

const q = (version: bigint | null, more = ''): string => {
  const parts = [version === null ? '' : `ledger_version=${version}`, more].filter((p) => p !== '');
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
};

export const CASES: Case[] = [
  { family: 'accounts', name: 'account', request: (v) => ({ path: `/v1/accounts/0x1${q(v)}` }) },
  {
    family: 'accounts',
    name: 'resources (a page with a cursor)',
    request: (v) => ({ path: `/v1/accounts/0x1/resources${q(v, 'limit=2')}` }),
  },
  {
    family: 'accounts',
    name: 'resource (struct tag as the SDK encodes it)',
    request: (v) => ({ path: `/v1/accounts/0x1/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E${q(v)}` }),
  },
  {
    family: 'accounts',
    name: 'modules (a page with a cursor)',
    request: (v) => ({ path: `/v1/accounts/0x1/modules${q(v, 'limit=1')}` }),
  },
  { family: 'accounts', name: 'module', request: (v) => ({ path: `/v1/accounts/0x1/module/sim${q(v)}` }) },
  {
    family: 'accounts',
    name: 'balance',
    request: (v) => ({ path: `/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin${q(v)}` }),
  },
  {
    family: 'tables',
    name: 'table item',
    request: (v) => ({
      path: `/v1/tables/${HANDLE}/item${q(v)}`,
      body: { key_type: 'u64', value_type: 'u64', key: '1' },
    }),
  },
  {
    family: 'tables',
    name: 'state value (BCS only)',
    json: false,
    request: (v) => ({
      path: `/v1/experimental/state_values/raw${q(v)}`,
      body: { key: '0x01' + HANDLE.slice(2) + '08' + '0100000000000000' },
    }),
  },
  {
    family: 'transactions',
    name: 'transaction by version',
    byPath: true,
    request: () => ({ path: '/v1/transactions/by_version/900' }),
  },
  {
    family: 'transactions',
    name: 'transaction by hash',
    byPath: true,
    request: () => ({ path: `/v1/transactions/by_hash/${simTransactionHash(4, 900n)}` }),
  },
  {
    family: 'blocks',
    name: 'block by height, with transactions',
    byPath: true,
    request: () => ({ path: '/v1/blocks/by_height/200?with_transactions=true' }),
  },
  { family: 'blocks', name: 'block by version', byPath: true, request: () => ({ path: '/v1/blocks/by_version/900' }) },
];

function send(base: string, r: Request, accept = 'application/json'): Promise<Reply> {
  if (r.body === undefined) return call(base, r.path, { headers: { accept } });
  return call(base, r.path, { headers: { accept, 'content-type': 'application/json' }, body: JSON.stringify(r.body) });
}

/** What must be byte-identical to the node: status, type, body and the cursor. */
function answerOf(reply: Reply): { status: number; type: string; cursor?: string; body: string } {
  return {
    status: reply.status,
    type: reply.headers['content-type'],
    cursor: reply.headers[CURSOR],
    body: reply.body.toString('hex'),
  };
}

const versionOf = (c: Case): bigint | null => (c.byPath ? null : PINNED);
/** The Accept a case is read with: JSON, or BCS for a route that answers only BCS. */
const acceptOf = (c: Case): string => (c.json === false ? 'application/x-bcs' : 'application/json');

let node: SimNode;
let url: string;
/** probes the nodes now, so the proxy learns of pruning at once */
let probe: () => Promise<void>;

beforeEach(async () => {
  node = await sim({ startVersion: START });
  const probes = new ManualProbes();
  const p = await proxy([node], { routing: QUIET_ROUTING }, { probeSchedule: probes });
  url = p.url;
  probe = () => probes.round();
});

describe.each(CASES)('$family: $name', (c) => {
  it('a repeated read reaches the node once and is byte-identical to it', async () => {
    const r = c.request(versionOf(c));
    const accept = acceptOf(c);
    const first = await send(url, r, accept);
    expect(first.status, first.body.toString()).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    const calls = node.counters.total;
    const second = await send(url, r, accept);
    expect(node.counters.total, 'the second read did not reach the node').toBe(calls);
    expect(second.headers['x-cache']).toBe('HIT');
    const direct = await send(node.url, r, accept);
    expect(answerOf(first)).toEqual(answerOf(direct));
    expect(answerOf(second)).toEqual(answerOf(direct));
    expect(second.headers['x-node-ledger-version']).toBe(String(START));
  });
});

describe.each(CASES.filter((c) => c.json !== false))('$family: $name', (c) => {
  it('JSON and BCS are separate entries', async () => {
    const r = c.request(versionOf(c));
    await send(url, r);
    const calls = node.counters.total;
    const bcs = await send(url, r, 'application/x-bcs');
    expect(node.counters.total).toBe(calls + 1);
    expect(bcs.headers['content-type']).toBe('application/x-bcs');
    expect(answerOf(bcs)).toEqual(answerOf(await send(node.url, r, 'application/x-bcs')));
    const again = await send(url, r, 'application/x-bcs');
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.body.equals(bcs.body)).toBe(true);
    expect((await send(url, r)).headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('a BCS-only route (state_values/raw)', () => {
  it('a JSON Accept is 403 api_disabled without ledger headers, and never reaches the node', async () => {
    const c = CASES.find((x) => x.json === false)!;
    const calls = node.counters.total;
    const reply = await send(url, c.request(PINNED));
    expect([reply.status, reply.json().error_code, reply.headers['x-node-ledger-version']]).toEqual([
      403,
      'api_disabled',
      undefined,
    ]);
    expect(node.counters.total).toBe(calls);
  });
});

describe('HEAD', () => {
  it('HEAD of a cached GET route: the headers of the hit, no body', async () => {
    const path = `/v1/accounts/0x1/module/sim?ledger_version=${PINNED}`;
    const get = await call(url, path);
    const calls = node.counters.total;
    const head = await request(url + path, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['x-cache']).toBe('HIT');
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect((await head.body.arrayBuffer()).byteLength).toBe(0);
    expect(node.counters.total).toBe(calls);
  });
});

describe.each(CASES.filter((c) => !c.byPath))('$family: $name, pinned', (c) => {
  it('a latest read goes to the node and is stored as the answer at its header version', async () => {
    const latest = await send(url, c.request(null), acceptOf(c));
    expect(latest.status).toBe(200);
    const calls = node.counters.total;
    const pinned = await send(url, c.request(BigInt(latest.headers['x-node-ledger-version'])), acceptOf(c));
    expect(node.counters.total).toBe(calls);
    expect(pinned.headers['x-cache']).toBe('HIT');
    expect(answerOf(pinned)).toEqual(answerOf(latest));
    await send(url, c.request(null), acceptOf(c));
    expect(node.counters.total, 'a second latest read goes to the node').toBe(calls + 1);
  });

  it('a version above the latest is 404 version_not_found, never cached; a pruned one 410, cached or not', async () => {
    for (let i = 0; i < 2; i++)
      expect((await send(url, c.request(START + 5n), acceptOf(c))).json().error_code).toBe('version_not_found');
    const calls = node.counters.total;
    await send(url, c.request(START + 5n), acceptOf(c));
    expect(node.counters.total).toBe(calls + 1);
    expect((await send(url, c.request(PINNED), acceptOf(c))).status).toBe(200);
    node.ledger.pruneTo(PINNED + 1n);
    await probe();
    const pruned = await send(url, c.request(PINNED), acceptOf(c));
    expect([pruned.status, pruned.json().error_code]).toEqual([410, 'version_pruned']);
  });
});

describe('path routes: what is cached, and until when', () => {
  const expectNotCached = async (path: string, code: string): Promise<void> => {
    const calls = node.counters.total;
    for (let i = 0; i < 2; i++) {
      const reply = await call(url, path);
      expect([reply.status, reply.json().error_code], path).toEqual([404, code]);
    }
    expect(node.counters.total, `${path}: both reads reached the node`).toBe(calls + 2);
  };

  it('a transaction or block not found yet is never cached: it may appear', async () => {
    await expectNotCached(`/v1/transactions/by_version/${START + 1n}`, 'transaction_not_found');
    await expectNotCached(`/v1/transactions/by_hash/0x${'ee'.repeat(32)}`, 'transaction_not_found');
    await expectNotCached(`/v1/blocks/by_height/${START}`, 'block_not_found');
    await expectNotCached(`/v1/blocks/by_version/${START + 1n}`, 'version_not_found');
    node.ledger.advance(8);
    await probe();
    expect((await call(url, `/v1/transactions/by_version/${START + 1n}`)).status).toBe(200);
  });

  it('a ledger_version on a transaction or block is ignored, as a node ignores it: no 404 or 410 for it', async () => {
    const plain = await call(url, '/v1/transactions/by_version/900');
    const calls = node.counters.total;
    for (const v of ['5', `${START + 100n}`, 'nonsense']) {
      const reply = await call(url, `/v1/transactions/by_version/900?ledger_version=${v}`);
      expect([reply.status, reply.headers['x-cache']]).toEqual([200, 'HIT']);
      expect(reply.body.equals(plain.body)).toBe(true);
    }
    expect(node.counters.total).toBe(calls);
  });

  it('pruned: by version and by_version blocks 410 version_pruned, by height 410 block_pruned, even when cached', async () => {
    const paths = ['/v1/transactions/by_version/900', '/v1/blocks/by_version/900', '/v1/blocks/by_height/200'];
    for (const path of paths) expect((await call(url, path)).status).toBe(200);
    node.ledger.pruneTo(904n);
    await probe();
    const codes = [];
    for (const path of paths) {
      const reply = await call(url, path);
      codes.push([reply.status, reply.json().error_code]);
    }
    expect(codes).toEqual([
      [410, 'version_pruned'],
      [410, 'version_pruned'],
      [410, 'block_pruned'],
    ]);
  });

  it('a transaction by hash is dropped once its version is pruned: then the node answers (404, no 410 for a hash)', async () => {
    const path = `/v1/transactions/by_hash/${simTransactionHash(4, 900n)}`;
    expect((await call(url, path)).status).toBe(200);
    expect((await call(url, path)).headers['x-cache']).toBe('HIT');
    node.ledger.pruneTo(901n);
    await probe();
    const calls = node.counters.total;
    const reply = await call(url, path);
    expect([reply.status, reply.json().error_code]).toEqual([404, 'transaction_not_found']);
    expect(node.counters.total).toBe(calls + 1);
  });

  it('a pending transaction is never cached; once committed it is', async () => {
    const hash = node.mempool.submit(START + 2n);
    const path = `/v1/transactions/by_hash/${hash}`;
    const calls = (): number => node.counters.byRoute.txn_by_hash;
    for (let i = 0; i < 2; i++) expect((await call(url, path)).json().type).toBe('pending_transaction');
    // In BCS too: TransactionData::Pending (variant 1) is never stored.
    for (let i = 0; i < 2; i++)
      expect((await call(url, path, { headers: { accept: 'application/x-bcs' } })).body[0]).toBe(1);
    expect(calls()).toBe(4);
    node.ledger.advance(2);
    await probe();
    const committed = await call(url, path);
    expect(committed.json().type).toBe('user_transaction');
    expect(committed.json().version).toBe(String(START + 2n));
    const again = await call(url, path);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(calls()).toBe(5);
  });
});

describe('two nodes at different versions', () => {
  it('a block or transaction a node behind has not got yet comes from the node ahead; from the node ahead a 404 is the answer', async () => {
    // The one behind is the normal node, so reads go to it first; the one ahead is an archive.
    const behind = await sim({ startVersion: 1005n });
    const ahead = await sim({ startVersion: 1009n });
    const p = await proxy([behind, { url: ahead.url, name: 'ahead', role: 'archive' }], {
      routing: { ...QUIET_ROUTING, maxAttempts: 2 },
    });
    for (const path of ['/v1/blocks/by_version/1005', '/v1/blocks/by_height/251', '/v1/transactions/by_version/1007']) {
      const reply = await call(p.url, path);
      expect(reply.status, `${path}: ${reply.body.toString()}`).toBe(200);
      expect(reply.body.equals((await call(ahead.url, path)).body)).toBe(true);
    }
    expect(behind.counters.byRoute.block_by_version + behind.counters.byRoute.txn_by_version).toBeGreaterThan(0);
    // Two normal nodes: a hash goes to the most advanced first, and its 404 is the answer (one call).
    const both = await proxy([behind, ahead], { routing: { ...QUIET_ROUTING, maxAttempts: 2 } });
    const calls = behind.counters.total + ahead.counters.total;
    const missing = await call(both.url, `/v1/transactions/by_hash/0x${'ee'.repeat(32)}`);
    expect([missing.status, missing.json().error_code]).toEqual([404, 'transaction_not_found']);
    expect(behind.counters.total + ahead.counters.total - calls, 'one call').toBe(1);
    expect(ahead.counters.byRoute.txn_by_hash).toBe(1);
  });

  it("a node's answer at N is passed on over the 404 version_not_found of a node that has not reached N", async () => {
    // state_values/raw answers 500 to a key that does not decode: node-specific to the
    // proxy, so it asks the other node, which has not reached N.
    const behind = await sim({ startVersion: 1000n });
    const ahead = await sim({ startVersion: 1009n });
    const p = await proxy([ahead, behind], { routing: { ...QUIET_ROUTING, maxAttempts: 2 } });
    const request = { path: '/v1/experimental/state_values/raw?ledger_version=1005', body: { key: '0x02ff' } };
    const reply = await send(p.url, request, 'application/x-bcs');
    const direct = await send(ahead.url, request, 'application/x-bcs');
    expect([reply.status, reply.json().error_code]).toEqual([500, 'internal_error']);
    expect(reply.body.equals(direct.body)).toBe(true);
  });
});

describe('pinned routes: deterministic 404s', () => {
  const cachedAfterOne = async (path: string, code: string, body?: unknown): Promise<void> => {
    const first = await send(url, { path, body });
    expect([first.status, first.json().error_code], path).toEqual([404, code]);
    const calls = node.counters.total;
    const second = await send(url, { path, body });
    expect([second.status, second.headers['x-cache']], path).toEqual([404, 'HIT']);
    expect(second.body.equals(first.body)).toBe(true);
    expect(node.counters.total, `${path}: the second read did not reach the node`).toBe(calls);
  };

  it('resource, module, account and table item not found at N are facts about N, cached', async () => {
    await cachedAfterOne(`/v1/accounts/0x1/resource/0x1::nope::Nope?ledger_version=${PINNED}`, 'resource_not_found');
    await cachedAfterOne(`/v1/accounts/0x1/module/nope?ledger_version=${PINNED}`, 'module_not_found');
    await cachedAfterOne(`/v1/accounts/${MISSING_ACCOUNT}/resources?ledger_version=${PINNED}`, 'account_not_found');
    const absent = findAbsentTableKey();
    await cachedAfterOne(`/v1/tables/${HANDLE}/item?ledger_version=${PINNED}`, 'table_item_not_found', {
      key_type: 'u64',
      value_type: 'u64',
      key: absent,
    });
  });
});

describe('keys: spellings a node reads alike share one entry', () => {
  it('short and long addresses, encoded and plain struct tags, ignored and default parameters', async () => {
    const long = '0x' + '0'.repeat(63) + '1';
    const spellings = [
      [
        `/v1/accounts/0x1/resource/0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>?ledger_version=${PINNED}`,
        `/v1/accounts/${long}/resource/0x1::coin::CoinStore%3C${long}::aptos_coin::AptosCoin%3E?ledger_version=0${PINNED}&foo=bar`,
      ],
      [
        `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2`,
        `/v1/accounts/${long.toUpperCase().replace('0X', '0x')}/resources?limit=02&ledger_version=${PINNED}`,
      ],
      ['/v1/blocks/by_height/200', '/v1/blocks/by_height/0200?with_transactions=false&x=1'],
      [
        `/v1/transactions/by_hash/${simTransactionHash(4, 900n)}`,
        `/v1/transactions/by_hash/${simTransactionHash(4, 900n).toUpperCase().replace('0X', '0x')}`,
      ],
    ];
    for (const [a, b] of spellings) {
      const first = await call(url, a);
      expect(first.status, a).toBe(200);
      const calls = node.counters.total;
      const second = await call(url, b);
      expect([second.status, second.headers['x-cache']], b).toEqual([200, 'HIT']);
      expect(second.body.equals(first.body)).toBe(true);
      expect(node.counters.total).toBe(calls);
    }
  });

  it('leading zeros of any length in a u64, in the query or the path, are the same number: one entry', async () => {
    const zeros = '0'.repeat(70);
    const spellings = [
      [`/v1/accounts/0x1?ledger_version=${PINNED}`, `/v1/accounts/0x1?ledger_version=${zeros}${PINNED}`],
      [
        `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2`,
        `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=${zeros}2`,
      ],
      ['/v1/transactions/by_version/900', `/v1/transactions/by_version/${zeros}900`],
      ['/v1/blocks/by_height/200', `/v1/blocks/by_height/${zeros}200`],
      ['/v1/blocks/by_version/900', `/v1/blocks/by_version/${zeros}900`],
    ];
    for (const [a, b] of spellings) {
      const first = await call(url, a);
      expect(first.status, a).toBe(200);
      const calls = node.counters.total;
      const second = await call(url, b);
      expect([second.status, second.headers['x-cache']], b).toEqual([200, 'HIT']);
      expect(second.body.equals(first.body)).toBe(true);
      expect(node.counters.total).toBe(calls);
    }
  });

  it("a leading '+' in a u64 (%2B in the query; + or %2B in the path) is the same number: one entry", async () => {
    const spellings = [
      [`/v1/accounts/0x1?ledger_version=${PINNED}`, `/v1/accounts/0x1?ledger_version=%2B${PINNED}`],
      [
        `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2`,
        `/v1/accounts/0x1/resources?ledger_version=%2B0${PINNED}&limit=%2B2`,
      ],
      ['/v1/transactions/by_version/900', '/v1/transactions/by_version/+900'],
      ['/v1/blocks/by_height/200', '/v1/blocks/by_height/%2B0200'],
      ['/v1/blocks/by_version/900', '/v1/blocks/by_version/+00900'],
    ];
    for (const [a, b] of spellings) {
      const first = await call(url, a);
      expect(first.status, a).toBe(200);
      const calls = node.counters.total;
      const second = await call(url, b);
      expect([second.status, second.headers['x-cache']], b).toEqual([200, 'HIT']);
      expect(second.body.equals(first.body)).toBe(true);
      expect(node.counters.total).toBe(calls);
    }
  });

  it('pages: another limit or start is another entry, and each replays its own cursor', async () => {
    const page1 = await call(url, `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2`);
    const cursor = page1.headers[CURSOR];
    expect(cursor).toMatch(/^0x[0-9a-f]+$/);
    const page2 = await call(url, `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2&start=${cursor}`);
    expect(page2.headers['x-cache']).toBe('MISS');
    expect(page2.headers[CURSOR]).not.toBe(cursor);
    const whole = await call(url, `/v1/accounts/0x1/resources?ledger_version=${PINNED}`);
    expect(whole.headers['x-cache']).toBe('MISS');
    expect(whole.headers[CURSOR]).toBeUndefined();
    expect((await call(url, `/v1/accounts/0x1/resources?ledger_version=${PINNED}&limit=2`)).headers[CURSOR]).toBe(
      cursor,
    );
    expect((await call(url, `/v1/accounts/0x1/resources?ledger_version=${PINNED}`)).headers[CURSOR]).toBeUndefined();
  });

  it('bad input is refused before it reaches the node', async () => {
    const calls = node.counters.total;
    for (const path of [
      '/v1/accounts/0xZZ',
      '/v1/accounts/0x1/resources?limit=70000',
      '/v1/accounts/0x1/resource/u64',
      '/v1/transactions/by_hash/0x12',
      '/v1/blocks/by_height/1?with_transactions=yes',
      '/v1/accounts/0x1/module/1abc',
    ]) {
      const reply = await call(url, path);
      expect([reply.status, reply.json().error_code], path).toEqual([400, 'web_framework_error']);
    }
    expect(node.counters.total).toBe(calls);
  });
});

describe('Redis: two proxies share every route family', () => {
  const redis = useRedisServer();

  it('what one proxy fetched, the other serves from Redis, byte for byte', async () => {
    await flushAll(redis.url);
    const config = { routing: QUIET_ROUTING, cache: { redis: { url: redis.url, keyPrefix: 'wallet:' } } };
    const a = await proxy([node], config);
    const b = await proxy([node], config);
    const admin = new Redis(redis.url);
    let stored = 0;
    for (const c of CASES) {
      const r = c.request(versionOf(c));
      const first = await send(a.url, r, acceptOf(c));
      expect(first.status, c.name).toBe(200);
      // The shared write lands in the background: wait for the entry, not for a time.
      stored += 1;
      await until(
        async () => (await admin.keys('wallet:*')).filter((k) => /^wallet:[0-9a-f]{64}$/.test(k)).length >= stored,
        2000,
        `${c.name} in Redis`,
      );
      const calls = node.counters.total;
      const other = await send(b.url, r, acceptOf(c));
      expect([other.headers['x-cache'], other.headers['x-cache-tier']], c.name).toEqual(['HIT', 'redis']);
      expect(answerOf(other), c.name).toEqual(answerOf(first));
      expect(node.counters.total, c.name).toBe(calls);
    }
    admin.disconnect();
  });
});

function findAbsentTableKey(): string {
  for (let n = 0; n < 256; n++) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    if (simTableItem(HANDLE, b, PINNED) === null) return String(n);
  }
  throw new Error('no absent key among the first 256');
}
