// Which answers of the wallet routes are facts (api.md §9), which say
// only that the node has not reached the item yet, and the version a path
// route's entry belongs to.
import { describe, expect, it } from 'vitest';
import type { RawRead } from '../../src/routes/route.js';
import { readRoutes, routeMatcher } from '../../src/routes/table.js';
import { cacheability, isNotYet } from '../../src/serve/policy.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';
import { vendorNames } from '../../src/wire/vendor.js';

const { match } = routeMatcher(readRoutes(vendorNames('node')));
const get = (url: string) => {
  const m = match('GET', url);
  if (m === undefined || m === 'undecodable') throw new Error(`no route for GET ${url}`);
  const raw: RawRead = {
    params: m.params,
    query: m.query,
    accept: undefined,
    contentType: undefined,
    body: Buffer.alloc(0),
  };
  return m.route.parse(raw);
};

const json = (status: number, value: unknown, errorCode?: string): NodeAnswer => ({
  upstream: 'n',
  status,
  contentType: 'application/json',
  body: Buffer.from(JSON.stringify(value)),
  ledger: null,
  errorCode,
});
const HASH = '0x' + 'ab'.repeat(32);

describe('wallet route cache policy', () => {
  it.each([
    ['/v1/accounts/0x1/resource/0x1::a::B?ledger_version=5', json(404, {}, 'resource_not_found'), true],
    ['/v1/accounts/0x1/resource/0x1::a::B?ledger_version=5', json(404, {}, 'module_not_found'), false],
    ['/v1/accounts/0x1/module/m?ledger_version=5', json(404, {}, 'module_not_found'), true],
    ['/v1/accounts/0x1/resources?ledger_version=5', json(404, {}, 'account_not_found'), true],
    ['/v1/accounts/0x1/resources?ledger_version=5', json(400, {}, 'invalid_input'), false],
    ['/v1/accounts/0x1?ledger_version=5', json(404, {}, 'version_not_found'), false],
    ['/v1/accounts/0x1/balance/0xa?ledger_version=5', json(200, 5), true],
    ['/v1/transactions/by_version/9', json(200, { type: 'user_transaction', version: '9' }), true],
    ['/v1/transactions/by_version/9', json(404, {}, 'transaction_not_found'), false],
    [`/v1/transactions/by_hash/${HASH}`, json(200, { type: 'pending_transaction', hash: HASH }), false],
    [`/v1/transactions/by_hash/${HASH}`, json(200, { type: 'user_transaction', version: '9' }), true],
    [`/v1/transactions/by_hash/${HASH}`, json(404, {}, 'transaction_not_found'), false],
    ['/v1/blocks/by_height/3', json(404, {}, 'block_not_found'), false],
    ['/v1/blocks/by_height/3', json(410, {}, 'block_pruned'), false],
  ] as const)('%s %j → %s', (url, answer, expected) => {
    expect(cacheability(get(url), answer).cacheable).toBe(expected);
  });

  it("a path route's entry belongs to the path's version, else the answer's version or first_version", () => {
    const itemVersion = (req: ReturnType<typeof get>, answer: NodeAnswer): bigint | null =>
      req.route.answerVersion(req, answer);
    expect(itemVersion(get('/v1/blocks/by_version/12'), json(200, { first_version: '8' }))).toBe(12n);
    expect(itemVersion(get(`/v1/transactions/by_hash/${HASH}`), json(200, { version: '77' }))).toBe(77n);
    expect(itemVersion(get('/v1/blocks/by_height/3'), json(200, { first_version: '12', last_version: '15' }))).toBe(
      12n,
    );
    const bcs = (bytes: Buffer): NodeAnswer => ({
      upstream: 'n',
      status: 200,
      contentType: 'application/x-bcs',
      body: bytes,
      ledger: null,
    });
    const u64 = (n: bigint): Buffer => Buffer.from(new BigUint64Array([n]).buffer);
    // TransactionData::OnChain { version, … }; Pending has no version; too short tells nothing.
    expect(
      itemVersion(
        get(`/v1/transactions/by_hash/${HASH}`),
        bcs(Buffer.concat([Buffer.from([0]), u64(77n), Buffer.alloc(32)])),
      ),
    ).toBe(77n);
    expect(itemVersion(get(`/v1/transactions/by_hash/${HASH}`), bcs(Buffer.from([1, 2, 3])))).toBeNull();
    // A BCS block: the answer's ledger version stands in (the height is checked on every read).
    const ledger = {
      chainId: 4,
      epoch: 1n,
      ledgerVersion: 40n,
      oldestLedgerVersion: 0n,
      ledgerTimestampUsec: 1n,
      blockHeight: 10n,
      oldestBlockHeight: 0n,
    };
    expect(itemVersion(get('/v1/blocks/by_height/3'), { ...bcs(Buffer.alloc(60)), ledger })).toBe(40n);
    expect(itemVersion(get('/v1/blocks/by_height/3'), bcs(Buffer.alloc(60)))).toBeNull();
    expect(cacheability(get(`/v1/transactions/by_hash/${HASH}`), bcs(Buffer.from([1, 0]))).cacheable).toBe(false);
  });

  it.each([
    ['/v1/accounts/0x1?ledger_version=5', json(404, {}, 'version_not_found'), true],
    ['/v1/accounts/0x1/resource/0x1::a::B?ledger_version=5', json(404, {}, 'resource_not_found'), false],
    ['/v1/accounts/0x1?ledger_version=5', json(410, {}, 'version_pruned'), false],
    ['/v1/transactions/by_version/9', json(404, {}, 'transaction_not_found'), true],
    ['/v1/transactions/by_version/9', json(410, {}, 'version_pruned'), false],
    [`/v1/transactions/by_hash/${HASH}`, json(404, {}, 'transaction_not_found'), true],
    [`/v1/transactions/by_hash/${HASH}`, json(200, { type: 'pending_transaction', hash: HASH }), false],
    ['/v1/blocks/by_height/3', json(404, {}, 'block_not_found'), true],
    ['/v1/blocks/by_height/3', json(410, {}, 'block_pruned'), false],
    ['/v1/blocks/by_version/12', json(404, {}, 'version_not_found'), true],
    ['/v1/blocks/by_version/12', json(404, {}, 'block_not_found'), true],
    ['/v1/blocks/by_version/12', json(500, {}, 'internal_error'), false],
  ] as const)('not yet: %s %j → %s', (url, answer, expected) => {
    expect(isNotYet(get(url), answer)).toBe(expected);
  });
});
