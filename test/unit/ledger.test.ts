import { describe, expect, it } from 'vitest';
import { decodeLedgerHeaders, encodeLedgerHeaders, ledgerHeaderNames } from '../../src/ledger/headers.js';
import { parseLedgerInfoJson, type LedgerInfo } from '../../src/ledger/info.js';
import { PruneClock } from '../../src/ledger/prune-clock.js';
import { Watermark } from '../../src/ledger/watermark.js';
import { RAW_ITEM_ROUTE, VIEW_ROUTE } from '../../src/routes/parse-read.js';
import { cacheability } from '../../src/serve/policy.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';

function info(version: bigint, oldest = 0n, tsSec = Number(version)): LedgerInfo {
  return {
    chainId: 4,
    epoch: 2n,
    ledgerVersion: version,
    oldestLedgerVersion: oldest,
    ledgerTimestampUsec: BigInt(tsSec) * 1_000_000n,
    blockHeight: version / 4n,
    oldestBlockHeight: oldest / 4n,
  };
}

describe('ledger headers', () => {
  const names = ledgerHeaderNames('x-aptos-');
  it('round-trips the seven headers under the vendor prefix', () => {
    const pairs = encodeLedgerHeaders(names, info(1234n, 10n));
    expect(pairs.map(([k]) => k)).toContain('x-aptos-ledger-oldest-version');
    expect(decodeLedgerHeaders(names, Object.fromEntries(pairs))).toEqual(info(1234n, 10n));
  });
  it('decodes nothing unless all seven are valid', () => {
    const headers = Object.fromEntries(encodeLedgerHeaders(names, info(5n)));
    delete headers['x-aptos-epoch'];
    expect(decodeLedgerHeaders(names, headers)).toBeNull();
    expect(
      decodeLedgerHeaders(names, {
        ...Object.fromEntries(encodeLedgerHeaders(names, info(5n))),
        'x-aptos-chain-id': '300',
      }),
    ).toBeNull();
  });
  // Headers and GET /v1 read u64s by the one wire rule (src/wire/u64.ts): twenty
  // digits above u64::MAX used to pass a digit-count regex as a version.
  it('reads u64 values by the wire rule: above u64::MAX is not a version, leading zeros are', () => {
    const headers = Object.fromEntries(encodeLedgerHeaders(names, info(5n)));
    expect(decodeLedgerHeaders(names, { ...headers, 'x-aptos-ledger-version': '99999999999999999999' })).toBeNull();
    expect(decodeLedgerHeaders(names, { ...headers, 'x-aptos-ledger-version': '0000000000000000000000005' })).toEqual(
      info(5n),
    );
    const body = {
      chain_id: 4,
      epoch: '2',
      ledger_version: '5',
      oldest_ledger_version: '0',
      ledger_timestamp: '5000000',
      block_height: '1',
      oldest_block_height: '0',
    };
    expect(parseLedgerInfoJson(body)).toEqual(info(5n));
    expect(parseLedgerInfoJson({ ...body, ledger_version: '18446744073709551616' })).toBeNull();
  });
});

describe('watermark', () => {
  it('never goes backwards', () => {
    const w = new Watermark();
    expect(w.observe(info(10n))).toBe(true);
    expect(w.observe(info(9n))).toBe(false);
    expect(w.observe(info(10n))).toBe(false);
    expect(w.current()!.ledgerVersion).toBe(10n);
    expect(w.observe(info(11n))).toBe(true);
  });
});

describe('prune clock', () => {
  it('uses the cap until it has seen enough chain time', () => {
    const clock = new PruneClock();
    clock.observe(info(100n, 0n, 100));
    expect(clock.secondsUntilPruned(50n, 3600)).toBe(3600);
  });
  it('estimates from versions per second and the pruning window', () => {
    const clock = new PruneClock();
    clock.observe(info(1000n, 0n, 0)); // chain time 0 s
    clock.observe(info(1100n, 100n, 50)); // 100 versions in 50 s: 2 versions/s
    expect(clock.versionsPerSecond()).toBe(2);
    // version 300 is 200 versions above the oldest: pruned in about 100 s
    expect(clock.secondsUntilPruned(300n, 3600)).toBe(100);
    expect(clock.secondsUntilPruned(1_000_000n, 3600)).toBe(3600);
    expect(clock.secondsUntilPruned(50n, 3600)).toBe(1);
  });
});

describe('cache policy (api.md §7)', () => {
  const answer = (status: number, errorCode?: string, vmErrorCode?: number | null): NodeAnswer => ({
    upstream: 'n',
    status,
    contentType: 'application/json',
    body: Buffer.alloc(0),
    ledger: null,
    errorCode,
    vmErrorCode,
  });
  it.each([
    ['raw_item', answer(200), true],
    ['raw_item', answer(404, 'table_item_not_found'), true],
    ['view', answer(400, 'invalid_input', 4016), true],
    ['view', answer(400, 'invalid_input', null), true],
    ['view', answer(400, 'invalid_input', 4002), false],
    ['raw_item', answer(400, 'invalid_input'), false],
    ['raw_item', answer(404, 'version_not_found'), false],
    ['view', answer(410, 'version_pruned'), false],
    ['raw_item', answer(403, 'api_disabled'), false],
    ['view', answer(500, 'internal_error'), false],
    ['view', answer(503, 'internal_error'), false],
    ['view', answer(400, 'web_framework_error'), false],
  ] as const)('%s %j → %s', (endpoint, a, expected) => {
    const route = endpoint === 'view' ? VIEW_ROUTE : RAW_ITEM_ROUTE;
    expect(
      cacheability({ route, version: 5n, format: 'json', identity: '', method: 'POST', path: '', accept: '' }, a)
        .cacheable,
    ).toBe(expected);
  });
});
