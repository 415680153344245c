// The route table's parsers and matcher (api.md §9): what a
// node reads alike gets one identity and one node path; what it refuses is a 400
// before any node is asked.
import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import type { RouteDescriptor } from '../../src/routes/route.js';
import type { RouteMatch } from '../../src/routes/table.js';
import { thrownBy } from '../helpers/expect.js';
import { mayMatch, match, parseRequest, ROUTES } from '../helpers/routes.js';

const LONG_1 = '0x' + '0'.repeat(63) + '1';
const parse = parseRequest;

function refusal(fn: () => unknown): [number, string] {
  const err = thrownBy(NodeError, fn);
  return [err.status, err.code];
}

describe('route table', () => {
  it('has one descriptor per cached route, with unique names', () => {
    const names = ROUTES.map((r: RouteDescriptor) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([
      'raw_item',
      'view',
      'account',
      'resources',
      'resource',
      'modules',
      'module',
      'balance',
      'table_item',
      'state_value',
      'txn_by_version',
      'txn_by_hash',
      'block_by_height',
      'block_by_version',
    ]);
  });

  it('mayMatch (one regex, before a body is read) agrees with match on every cached route and refuses the rest', () => {
    const urls: Array<['GET' | 'POST', string, boolean]> = [
      ['POST', '/v1/tables/0x1/raw_item?ledger_version=5', true],
      ['POST', '/v1/view', true],
      ['POST', '/v1/tables/0x1/item', true],
      ['POST', '/v1/experimental/state_values/raw?x=1', true],
      ['POST', '/v1/transactions', false],
      ['POST', '/v1/view/more', false],
      ['GET', '/v1/accounts/0x1', true],
      ['GET', '/v1/accounts/0x1/resource/0x1::a::B?ledger_version=3', true],
      ['GET', '/v1/blocks/by_height/3?with_transactions=true', true],
      ['GET', '/v1/estimate_gas_price', false],
      ['GET', '/v1/accounts/0x1/transactions', false],
      ['GET', '/v1/view', false],
    ];
    for (const [method, url, cached] of urls) {
      expect(mayMatch(method, url), `${method} ${url}`).toBe(cached);
      expect(match(method, url) !== undefined, `${method} ${url}`).toBe(cached);
    }
  });

  it('matches only its own method and path', () => {
    expect((match('GET', '/v1/accounts/0x1/resource/0x1::a::B') as RouteMatch).route.name).toBe('resource');
    expect(match('POST', '/v1/accounts/0x1')).toBeUndefined();
    expect(match('GET', '/v1/accounts/0x1/transactions')).toBeUndefined();
    expect(match('GET', '/v1/accounts/0x1/module/sim/extra')).toBeUndefined();
    expect(match('GET', '/v1/estimate_gas_price')).toBeUndefined();
    expect(match('GET', '/v1/accounts/%E0%A4%A')).toBe('undecodable');
  });
});

describe('canonical requests', () => {
  const same = (...reqs: Array<ReturnType<typeof parse>>): void => {
    for (const r of reqs.slice(1)) {
      expect([r.route.name, r.identity, r.path, r.format]).toEqual([
        reqs[0].route.name,
        reqs[0].identity,
        reqs[0].path,
        reqs[0].format,
      ]);
    }
  };

  it('addresses in their long form, struct tags as the SDK encodes them or not', () => {
    same(
      parse('GET', '/v1/accounts/0x1/resource/0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>?ledger_version=5'),
      parse(
        'GET',
        `/v1/accounts/${LONG_1}/resource/0x1::coin::CoinStore%3C${LONG_1}::aptos_coin::AptosCoin%3E?ledger_version=05`,
      ),
      // without 0x: exactly 64 digits, as on a node
      parse(
        'GET',
        `/v1/accounts/${LONG_1.slice(2)}/resource/0x1::coin::CoinStore%3C0x01::aptos_coin::AptosCoin%3E?ledger_version=5&unknown=x`,
      ),
    );
    const r = parse(
      'GET',
      '/v1/accounts/0x1/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E?ledger_version=5',
    );
    expect(r.path).toBe(
      `/v1/accounts/${LONG_1}/resource/${encodeURIComponent(`${LONG_1}::coin::CoinStore<${LONG_1}::aptos_coin::AptosCoin>`)}?ledger_version=5`,
    );
  });

  it('pages keyed on start and limit as the node reads them; unknown parameters dropped', () => {
    same(
      parse('GET', '/v1/accounts/0x1/resources?limit=10&start=0xab&x=1'),
      parse('GET', '/v1/accounts/0x1/resources?start=0xab&limit=010'),
    );
    const a = parse('GET', '/v1/accounts/0x1/resources?limit=10');
    const b = parse('GET', '/v1/accounts/0x1/resources?limit=11');
    const c = parse('GET', '/v1/accounts/0x1/resources');
    expect(new Set([a.identity, b.identity, c.identity]).size).toBe(3);
    expect(a.path).toBe(`/v1/accounts/${LONG_1}/resources?limit=10`);
  });

  it('with_transactions=false is the default; a ledger_version on a transaction or block is ignored', () => {
    same(
      parse('GET', '/v1/blocks/by_height/7'),
      parse('GET', '/v1/blocks/by_height/007?with_transactions=false&ledger_version=3'),
    );
    expect(parse('GET', '/v1/blocks/by_height/7?with_transactions=true').path).toBe(
      '/v1/blocks/by_height/7?with_transactions=true',
    );
    const t = parse('GET', '/v1/transactions/by_version/9?ledger_version=nonsense');
    expect([t.version, t.item, t.route.pin]).toEqual([null, { version: 9n }, 'path']);
  });

  it('hashes in lower case with 0x', () => {
    const hash = 'AB'.repeat(32);
    same(
      parse('GET', `/v1/transactions/by_hash/0x${hash}`),
      parse('GET', `/v1/transactions/by_hash/${hash.toLowerCase()}`),
    );
  });

  it('table item bodies: member order, whitespace, short addresses in types and ignored members do not matter', () => {
    same(
      parse('POST', '/v1/tables/0x1/item?ledger_version=5', {
        body: { key_type: 'address', value_type: '0x1::string::String', key: '0x2' },
      }),
      parse('POST', `/v1/tables/${LONG_1}/item?ledger_version=5`, {
        body: ` { "key" : "0x2", "value_type": "${LONG_1}::string::String", "key_type":"address", "extra": 1 } `,
      }),
    );
    const json = parse('POST', '/v1/tables/0x1/item', { body: { key_type: 'u64', value_type: 'u64', key: '1' } });
    const bcs = parse('POST', '/v1/tables/0x1/item', {
      body: { key_type: 'u64', value_type: 'u64', key: '1' },
      accept: 'application/x-bcs',
    });
    expect([json.format, bcs.format]).toEqual(['json', 'bcs']);
  });

  it('a latest read pinned at N (pinnedAt) is the read a client makes with ?ledger_version=N, on every route pinned by version', () => {
    const HANDLE_BODY = { key: '0x005a' };
    const ITEM_BODY = { key_type: 'u64', value_type: 'u64', key: '1' };
    const latest: Array<[string, string, { accept?: string; body?: unknown }?]> = [
      ['POST', '/v1/tables/0x1/raw_item', { accept: 'application/x-bcs', body: HANDLE_BODY }],
      ['POST', '/v1/view', { body: { function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] } }],
      ['GET', '/v1/accounts/0x1'],
      ['GET', '/v1/accounts/0x1/resources'],
      ['GET', '/v1/accounts/0x1/resources?limit=10&start=0xab'],
      ['GET', '/v1/accounts/0x1/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E'],
      ['GET', '/v1/accounts/0x1/modules?limit=3'],
      ['GET', '/v1/accounts/0x1/module/sim'],
      ['GET', '/v1/accounts/0x1/balance/0xa'],
      ['POST', '/v1/tables/0x1/item', { body: ITEM_BODY }],
      ['POST', '/v1/experimental/state_values/raw', { accept: 'application/x-bcs', body: { key: '0x01' } }],
    ];
    const covered = new Set<string>();
    for (const [method, url, init] of latest) {
      const req = parse(method as 'GET' | 'POST', url, init);
      const pinnedUrl = url.includes('?') ? url.replace('?', '?ledger_version=77&') : `${url}?ledger_version=77`;
      const pinned = parse(method as 'GET' | 'POST', pinnedUrl, init);
      same(req.route.pinnedAt!(req, 77n), pinned);
      expect(req.route.pinnedAt!(req, 77n).version).toBe(77n);
      // Pinned already: pinned again at another version.
      same(pinned.route.pinnedAt!(pinned, 5n), parse(method as 'GET' | 'POST', pinnedUrl.replace('=77', '=5'), init));
      covered.add(req.route.name);
    }
    expect([...covered].sort()).toEqual(
      ROUTES.filter((r) => r.pin === 'version')
        .map((r) => r.name)
        .sort(),
    );
    expect(ROUTES.filter((r) => r.pin === 'path').every((r) => r.pinnedAt === undefined)).toBe(true);
  });

  it('balance: a coin type or a fungible asset address', () => {
    expect(parse('GET', '/v1/accounts/0x1/balance/0xa').identity).toBe(`${LONG_1}\n0x${'0'.repeat(63)}a`);
    expect(parse('GET', '/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin').identity).toBe(
      `${LONG_1}\n${LONG_1}::aptos_coin::AptosCoin`,
    );
  });
});

describe('refused before a node is asked', () => {
  it.each([
    ['GET', '/v1/accounts/0xZZ'],
    ['GET', '/v1/accounts/0x1?ledger_version=-1'],
    ['GET', '/v1/accounts/0x1?ledger_version=1&ledger_version=2'],
    ['GET', '/v1/accounts/0x1/resources?limit=65536'],
    ['GET', '/v1/accounts/0x1/resources?limit=ten'],
    ['GET', '/v1/accounts/0x1/resource/u64'],
    ['GET', '/v1/accounts/0x1/resource/0x1::coin'],
    ['GET', '/v1/accounts/0x1/module/9lives'],
    ['GET', '/v1/accounts/0x1/balance/nope'],
    ['GET', '/v1/transactions/by_version/1.5'],
    ['GET', '/v1/transactions/by_hash/0x1234'],
    ['GET', '/v1/blocks/by_height/1?with_transactions=1'],
  ] as const)('%s %s → 400 web_framework_error', (method, url) => {
    expect(refusal(() => parse(method, url))).toEqual([400, 'web_framework_error']);
  });

  it('table item: a body that is not JSON, a bad type, no key; state values: BCS only, after the body is parsed', () => {
    expect(refusal(() => parse('POST', '/v1/tables/0x1/item', { body: '{"key_type":' }))).toEqual([
      400,
      'web_framework_error',
    ]);
    expect(
      refusal(() => parse('POST', '/v1/tables/0x1/item', { body: { key_type: 'u65', value_type: 'u64', key: '1' } })),
    ).toEqual([400, 'web_framework_error']);
    expect(
      refusal(() => parse('POST', '/v1/tables/0x1/item', { body: { key_type: 'u64', value_type: 'u64' } })),
    ).toEqual([400, 'web_framework_error']);
    expect(
      refusal(() =>
        parse('POST', '/v1/tables/0x1/item', {
          body: { key_type: 'u64', value_type: 'u64', key: '1' },
          contentType: 'text/plain',
        }),
      ),
    ).toEqual([400, 'web_framework_error']);
    expect(refusal(() => parse('POST', '/v1/experimental/state_values/raw', { body: { key: '0x01' } }))).toEqual([
      403,
      'api_disabled',
    ]);
    expect(refusal(() => parse('POST', '/v1/experimental/state_values/raw', { body: { key: 'zz' } }))).toEqual([
      400,
      'web_framework_error',
    ]);
    const ok = parse('POST', '/v1/experimental/state_values/raw?ledger_version=3', {
      body: { key: '0xAB' },
      accept: 'application/x-bcs',
    });
    expect([ok.identity, ok.version, ok.format]).toEqual(['ab', 3n, 'bcs']);
  });
});
