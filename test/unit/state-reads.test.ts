// What each covered route says its latest answer reads (SPEC-feed rule 5, as
// aptos-core's handlers read it), checked against StateKeys whose hashes the
// chain recorded (test/fixtures/feed-vectors.json): the route's key bytes are the
// ones a write set holds for the same key.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReadRequest } from '../../src/model/read.js';
import type { StateRead } from '../../src/model/state-read.js';
import { parseRequest as parse } from '../helpers/routes.js';

const vectors = JSON.parse(readFileSync('test/fixtures/feed-vectors.json', 'utf8')) as {
  stateKeys: Array<{ kind: string; address: string; struct: string; state_key_hash: string }>;
};

const SALT = createHash('sha3-256').update('APTOS::StateKey').digest();
const hashOf = (key: Uint8Array): string => `0x${createHash('sha3-256').update(SALT).update(key).digest('hex')}`;
const long = (short: string): string => `0x${short.slice(2).padStart(64, '0')}`;

const ANSWER = { status: 200, contentType: 'application/json', body: Buffer.from('{}') };
function stateRead(req: ReadRequest): StateRead | null {
  return req.route.stateRead?.(req, ANSWER) ?? null;
}

const ACCOUNT = vectors.stateKeys.find((k) => k.struct === '0x1::account::Account')!;
/** The hash of the Account resource's StateKey at `address`, as the account route names it. */
const accountKeyHash = (address: string): string =>
  hashOf(stateRead(parse('GET', `/v1/accounts/${address}`))!.keys[0]!);
const RESOURCES = vectors.stateKeys.filter(
  (k) => k.kind.startsWith('AccessPath, Path::Resource') && !k.kind.includes('Group'),
);

describe('what a latest answer reads', () => {
  it('an account reads its Account resource, as the chain hashed the key, and the feature flags', () => {
    const read = stateRead(parse('GET', `/v1/accounts/${ACCOUNT.address}`))!;
    expect(hashOf(read.keys[0]!)).toBe(ACCOUNT.state_key_hash);
    expect(read.keys).toHaveLength(2);
    expect(read.accounts).toEqual([]);
  });

  it("a resource reads its own key, its module, and any group at the address, and needs the account's to exist", () => {
    expect(RESOURCES.length).toBeGreaterThan(1);
    for (const vector of RESOURCES) {
      const path = `/v1/accounts/${vector.address}/resource/${encodeURIComponent(vector.struct)}`;
      const bcs = stateRead(parse('GET', path, { accept: 'application/x-bcs' }))!;
      expect(hashOf(bcs.keys[0]!), vector.struct).toBe(vector.state_key_hash);
      // An older node answers account_not_found without it; the Account's value is not read.
      expect(bcs.existing?.map(hashOf)).toEqual([accountKeyHash(vector.address)]);
      expect(bcs.keys).toHaveLength(3);
      expect(bcs.accounts).toEqual([{ address: long(vector.address), writes: 'group' }]);
      expect(bcs.frameworkModules).toBe(false);
      // JSON reads the definitions of the types it shows: the modules at the tag's addresses, and the framework's.
      const json = stateRead(parse('GET', path))!;
      expect(json.accounts).toEqual([
        { address: long(vector.address), writes: 'group' },
        { address: long('0x1'), writes: 'code' },
      ]);
      expect(json.frameworkModules).toBe(true);
    }
  });

  it("a JSON resource's type arguments name modules too", () => {
    const tag = `0x1::coin::CoinStore<${'0x' + 'ee'.repeat(32)}::usd::USD>`;
    const json = stateRead(parse('GET', `/v1/accounts/0x5/resource/${encodeURIComponent(tag)}`))!;
    expect(json.accounts).toEqual([
      { address: long('0x5'), writes: 'group' },
      { address: long('0x1'), writes: 'code' },
      { address: `0x${'ee'.repeat(32)}`, writes: 'code' },
    ]);
  });

  it('a list of resources reads every AccessPath write at the address and every module; a list of modules, every module at it', () => {
    const resources = stateRead(parse('GET', `/v1/accounts/0x1/resources?limit=5`))!;
    expect(resources.accounts).toEqual([{ address: long('0x1'), writes: 'any' }]);
    expect(resources.anyModule).toBe(true);
    const modules = stateRead(parse('GET', '/v1/accounts/0x1/modules'))!;
    expect(modules.accounts).toEqual([{ address: long('0x1'), writes: 'code' }]);
    expect(modules.keys).toEqual([]);
    expect(modules.existing?.map(hashOf)).toEqual([accountKeyHash('0x1')]);
    const module = stateRead(parse('GET', '/v1/accounts/0x1/module/coin'))!;
    expect(module.keys).toHaveLength(1);
    expect(module.existing?.map(hashOf)).toEqual([accountKeyHash('0x1')]);
  });

  it('raw_item reads its table item; state_values/raw the StateKey it names', () => {
    const handle = `0x${'ab'.repeat(32)}`;
    const raw = stateRead(
      parse('POST', `/v1/tables/${handle}/raw_item`, { accept: 'application/x-bcs', body: { key: '0x0102' } }),
    )!;
    expect(Buffer.from(raw.keys[0]!).toString('hex')).toBe(`01${'ab'.repeat(32)}020102`);
    const key = `0x00${'cd'.repeat(32)}0102`;
    const state = stateRead(
      parse('POST', '/v1/experimental/state_values/raw', { accept: 'application/x-bcs', body: { key } }),
    )!;
    expect(Buffer.from(state.keys[0]!).toString('hex')).toBe(key.slice(2));
  });

  it('judges a 404 by the same state, with the keys a 200 needs to exist read whole; no other error', () => {
    const path = `/v1/accounts/${ACCOUNT.address}/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E`;
    const req = parse('GET', path);
    const notFound = { status: 404, contentType: 'application/json', body: Buffer.from('{}') };
    const absent = req.route.stateRead?.(req, notFound);
    const present = stateRead(req)!;
    // An account created since changes an older node's account_not_found.
    expect(absent?.keys.map(hashOf)).toEqual([...present.keys, ...present.existing!].map(hashOf));
    expect(absent?.existing).toBeUndefined();
    expect(absent?.accounts).toEqual(present.accounts);
    for (const status of [400, 403, 410, 500, 503])
      expect(req.route.stateRead?.(req, { ...notFound, status }), String(status)).toBeNull();
  });

  it('views, balances and JSON table items are never answered from the feed', () => {
    const view = parse('POST', '/v1/view', { body: { function: '0x1::m::f', type_arguments: [], arguments: [] } });
    expect(view.route.stateRead).toBeUndefined();
    expect(parse('GET', '/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin').route.stateRead).toBeUndefined();
    const item = parse('POST', '/v1/tables/0x1/item', { body: { key_type: 'u8', value_type: 'u8', key: 1 } });
    expect(item.route.stateRead).toBeUndefined();
  });
});
