// api.md §7 "Real clients": the Aptos TS SDK pointed at the proxy (vendor aptos) in
// front of the simulated node (vendor aptos) works unchanged. aptos.view fetches the
// module ABI (a cached route) and sends a BCS request; viewJson sends JSON;
// getLedgerInfo is GET /v1. Pinned calls are cache hits the second time.
import {
  AccountAddress,
  Aptos,
  AptosApiError,
  AptosConfig,
  type Client,
  MimeType,
  Network,
  postAptosFullNode,
  Serializer,
} from '@aptos-labs/ts-sdk';
// The SDK's own HTTP client (a dependency of @aptos-labs/ts-sdk): its bcsRequest keeps the answer as bytes.
import { bcsRequest } from '@aptos-labs/aptos-client';
import { request } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import { simBalance, simTableItem, VM_ABORTED, type SimNode } from '../../src/sim/index.js';
import { proxy, sim, QUIET_ROUTING } from '../helpers/proxy.js';

const OWNER = '0x' + '42'.repeat(32);
const HANDLE = '0x' + 'cd'.repeat(32);
const START = 1000n;

/** A key the sim's table at HANDLE holds (about three in four do). */
function presentU64Key(): { n: bigint; bytes: Buffer } {
  for (let n = 0n; n < 64n; n++) {
    const ser = new Serializer();
    ser.serializeU64(n);
    const bytes = Buffer.from(ser.toUint8Array());
    if (simTableItem(HANDLE, bytes, START) !== null) return { n, bytes };
  }
  throw new Error('no present key among the first 64');
}

function absentU64Key(): Buffer {
  for (let n = 0n; n < 256n; n++) {
    const ser = new Serializer();
    ser.serializeU64(n);
    const bytes = Buffer.from(ser.toUint8Array());
    if (simTableItem(HANDLE, bytes, START) === null) return bytes;
  }
  throw new Error('no absent key among the first 256');
}

describe('Aptos TS SDK through the proxy (vendor aptos)', () => {
  let node: SimNode;
  let aptos: Aptos;
  let base: string;

  beforeEach(async () => {
    node = await sim({ vendor: 'aptos', chainId: 4 });
    const p = await proxy([node], { vendor: 'aptos', routing: QUIET_ROUTING });
    base = p.url;
    aptos = new Aptos(new AptosConfig({ network: Network.CUSTOM, fullnode: `${base}/v1` }));
  });

  it('getLedgerInfo passes through GET /v1 unchanged', async () => {
    const info = await aptos.getLedgerInfo();
    expect(info).toMatchObject({
      chain_id: 4,
      ledger_version: String(START),
      node_role: 'full_node',
      git_hash: 'simulated',
    });
    const direct = await (await fetch(`${node.url}/v1`)).json();
    expect(info).toEqual(direct);
    expect(node.counters.requests.some((r) => r.method === 'GET' && r.url === '/v1')).toBe(true);
  });

  it('aptos.view (ABI fetch + BCS request), latest: equals the sim model', async () => {
    expect(await aptos.view({ payload: { function: '0x1::sim::add', functionArguments: [2, 40] } })).toEqual(['42']);
    expect(await aptos.view({ payload: { function: '0x1::sim::balance', functionArguments: [OWNER] } })).toEqual([
      String(simBalance(OWNER, START)),
    ]);
    expect(await aptos.view({ payload: { function: '0x1::sim::pair', functionArguments: [9] } })).toEqual(['4', false]);
    expect(
      await aptos.view({ payload: { function: '0x1::sim::type_name', typeArguments: ['u64'], functionArguments: [] } }),
    ).toEqual(['u64']);
    // The ABI came through the module route; the view reached the node as BCS with the aptos media type.
    expect(node.counters.byRoute.module).toBeGreaterThan(0);
    const views = node.counters.requests.filter((r) => r.url.startsWith('/v1/view'));
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) expect(v.headers['content-type']).toBe('application/x.aptos.view_function+bcs');
  });

  it('aptos.view pinned: right value, and a cache hit the second time (no node view call)', async () => {
    const pinned = {
      payload: { function: '0x1::sim::balance' as const, functionArguments: [OWNER] },
      options: { ledgerVersion: 990 },
    };
    expect(await aptos.view(pinned)).toEqual([String(simBalance(OWNER, 990n))]);
    const viewsAfterFirst = node.counters.byRoute.view;
    expect(viewsAfterFirst).toBe(1);
    expect(node.counters.requests.find((r) => r.url.startsWith('/v1/view'))!.url).toBe('/v1/view?ledger_version=990');
    expect(await aptos.view(pinned)).toEqual([String(simBalance(OWNER, 990n))]);
    expect(node.counters.byRoute.view).toBe(viewsAfterFirst);
    // A different version is a different entry.
    expect(await aptos.view({ ...pinned, options: { ledgerVersion: 970 } })).toEqual([String(simBalance(OWNER, 970n))]);
    expect(node.counters.byRoute.view).toBe(viewsAfterFirst + 1);
  });

  it('aptos.viewJson latest and pinned; pinned repeats are hits', async () => {
    expect(await aptos.viewJson({ payload: { function: '0x1::sim::add', functionArguments: ['2', '40'] } })).toEqual([
      '42',
    ]);
    const latestViews = node.counters.byRoute.view;
    expect(latestViews).toBe(1);
    const pinned = {
      payload: { function: '0x1::sim::balance' as const, functionArguments: [OWNER] },
      options: { ledgerVersion: 980 },
    };
    expect(await aptos.viewJson(pinned)).toEqual([String(simBalance(OWNER, 980n))]);
    expect(node.counters.byRoute.view).toBe(latestViews + 1);
    expect(await aptos.viewJson(pinned)).toEqual([String(simBalance(OWNER, 980n))]);
    expect(node.counters.byRoute.view).toBe(latestViews + 1);
    const jsonViews = node.counters.requests.filter((r) => r.url.startsWith('/v1/view'));
    for (const v of jsonViews) expect(v.headers['content-type']).toMatch(/^application\/json/);
  });

  it('the latest view answer is stored as the pinned answer at its version', async () => {
    expect(await aptos.viewJson({ payload: { function: '0x1::sim::balance', functionArguments: [OWNER] } })).toEqual([
      String(simBalance(OWNER, START)),
    ]);
    const views = node.counters.byRoute.view;
    expect(
      await aptos.viewJson({
        payload: { function: '0x1::sim::balance', functionArguments: [OWNER] },
        options: { ledgerVersion: Number(START) },
      }),
    ).toEqual([String(simBalance(OWNER, START))]);
    expect(node.counters.byRoute.view).toBe(views);
  });

  it('raw_item with a key serialized by the SDK (u64), via the SDK client: node bytes, then a hit', async () => {
    const { bytes } = presentU64Key();
    const expected = simTableItem(HANDLE, bytes, 995n)!;
    // The SDK's request() drops `acceptType` and postAptosFullNode drops per-call
    // HEADERS, so Accept goes in the config's fullnode headers.
    const bcsConfig = new AptosConfig({
      network: Network.CUSTOM,
      fullnode: `${base}/v1`,
      client: { provider: bcsRequest as unknown as Client['provider'] },
      fullnodeConfig: { HEADERS: { accept: MimeType.BCS } },
    });
    const ask = () =>
      postAptosFullNode<{ key: string }, Buffer>({
        aptosConfig: bcsConfig,
        originMethod: 'rawItemTest',
        path: `tables/${HANDLE}/raw_item`,
        params: { ledger_version: 995 },
        body: { key: '0x' + bytes.toString('hex') },
        acceptType: MimeType.BCS,
      });
    const first = await ask();
    expect(first.status).toBe(200);
    expect(Buffer.from(first.data).toString('hex')).toBe(expected.toString('hex'));
    expect(node.counters.byRoute.raw_item).toBe(1);
    const second = await ask();
    expect(Buffer.from(second.data).toString('hex')).toBe(expected.toString('hex'));
    expect(second.headers['x-cache']).toBe('HIT');
    expect(node.counters.byRoute.raw_item).toBe(1);
  });

  it('raw_item with an address key (AccountAddress.serialize), via undici: node bytes, pinned hit, absent key 404', async () => {
    let keyBytes: Buffer | null = null;
    for (let i = 1; i < 64 && keyBytes === null; i++) {
      const ser = new Serializer();
      AccountAddress.from('0x' + i.toString(16)).serialize(ser);
      const candidate = Buffer.from(ser.toUint8Array());
      if (simTableItem(HANDLE, candidate, 990n) !== null) keyBytes = candidate;
    }
    expect(keyBytes).not.toBeNull();
    expect(keyBytes!.length).toBe(32);
    const post = async (key: Buffer, version: number) => {
      const res = await request(`${base}/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: JSON.stringify({ key: '0x' + key.toString('hex') }),
      });
      return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    };
    const first = await post(keyBytes!, 990);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/x-bcs');
    expect(first.body.toString('hex')).toBe(simTableItem(HANDLE, keyBytes!, 990n)!.toString('hex'));
    expect(first.headers['x-aptos-ledger-version']).toBe(String(START));
    expect(first.headers['x-node-ledger-version']).toBeUndefined();
    const second = await post(keyBytes!, 990);
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers['x-cache']).toBe('HIT');
    expect(node.counters.byRoute.raw_item).toBe(1);

    const absent = await post(absentU64Key(), 990);
    expect(absent.status).toBe(404);
    expect(JSON.parse(absent.body.toString('utf8'))).toMatchObject({
      error_code: 'table_item_not_found',
      vm_error_code: null,
    });
  });

  it('aptos.view of always_abort rejects with the node error (400, vm_error_code 4016)', async () => {
    const err = await aptos.view({ payload: { function: '0x1::sim::always_abort', functionArguments: [] } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AptosApiError);
    const apiErr = err as AptosApiError;
    expect(apiErr.status).toBe(400);
    expect(apiErr.data).toMatchObject({ error_code: 'invalid_input', vm_error_code: VM_ABORTED });
    expect(String(apiErr.message)).toMatch(/4016|abort/i);
  });

  it('aptos.view of always_abort pinned: the deterministic 400 is cached too', async () => {
    const pinned = {
      payload: { function: '0x1::sim::always_abort' as const, functionArguments: [] },
      options: { ledgerVersion: 990 },
    };
    for (let i = 0; i < 2; i++) {
      const err = (await aptos.view(pinned).then(
        () => null,
        (e: unknown) => e,
      )) as AptosApiError;
      expect(err).toBeInstanceOf(AptosApiError);
      expect(err.status).toBe(400);
      expect(err.data).toMatchObject({ error_code: 'invalid_input', vm_error_code: VM_ABORTED });
    }
    expect(node.counters.byRoute.view).toBe(1);
  });
});
