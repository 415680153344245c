// A hosted node: its API lives under a path prefix (https://host/<tenant>/v1) and
// wants an API key header (upstreams[].headers). Every call the proxy makes (reads,
// probes, passthrough, the SDK's ABI fetch) must carry both; a client cannot
// replace the key, and no call may go to the origin's bare /v1.
import { Aptos, AptosConfig, Network } from '@aptos-labs/ts-sdk';
import { describe, expect, it } from 'vitest';
import { simBalance } from '../../src/sim/index.js';
import { gateway, type Gateway } from '../helpers/gateway.js';
import { call, proxy, rawItem, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const PREFIX = '/tenant-7/key-in-path';
const KEY = { name: 'X-Api-Key', value: 'secret-123' };
const OWNER = '0x' + '42'.repeat(32);

function expectEveryCallPrefixedAndKeyed(gw: Gateway): void {
  expect(gw.seen.length).toBeGreaterThan(0);
  for (const seen of gw.seen) {
    expect(seen.url.startsWith(`${PREFIX}/v1`), `${seen.method} ${seen.url}`).toBe(true);
    expect(seen.headers['x-api-key'], `${seen.method} ${seen.url}`).toBe(KEY.value);
  }
}

async function hostedSetup(extra: Record<string, unknown> = {}) {
  const node = await sim({ startVersion: 1000n, ...(extra.vendor === 'aptos' ? { vendor: 'aptos' } : {}) });
  const gw = await gateway(node.url, PREFIX, KEY);
  const { url } = await proxy([{ url: `${gw.url}/v1`, name: 'hosted', headers: { [KEY.name]: KEY.value } }], {
    routing: { probeIntervalMs: 50 },
    ...extra,
  });
  return { node, gw, url };
}

describe('a hosted node behind a path prefix and an API key', () => {
  it('serves pinned and latest reads through the prefix, with the key, and caches them', async () => {
    const { node, gw, url } = await hostedSetup();
    const key = '0x0000000000000001';
    const first = await rawItem(url, key, { version: 990, accept: 'application/x-bcs' });
    const direct = await rawItem(node.url, key, { version: 990, accept: 'application/x-bcs' });
    expect(first.status, first.body.toString()).toBe(direct.status);
    expect(first.body.equals(direct.body)).toBe(true);
    const again = await rawItem(url, key, { version: 990, accept: 'application/x-bcs' });
    expect(again.headers['x-cache']).toBe('HIT');
    expect(node.counters.byRoute.raw_item, 'the direct read and one through the proxy').toBe(2);

    const latest = await call(url, '/v1/view', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [OWNER] }),
    });
    expect(latest.status, latest.body.toString()).toBe(200);
    expect(latest.json()).toEqual([String(simBalance(OWNER, 1000n))]);
    expectEveryCallPrefixedAndKeyed(gw);
  });

  it('probes the node through the prefix: it is healthy and its ledger is known', async () => {
    const { gw, url } = await hostedSetup();
    const probes = (): number => gw.seen.filter((s) => s.method === 'GET' && s.url === `${PREFIX}/v1`).length;
    await until(() => probes() > 1, 3000, 'two probes through the prefix');
    // A pruned version is answered by the proxy from the probed ledger (oldest 0 here: none is pruned).
    const reply = await rawItem(url, '0x01', { version: 5 });
    expect(reply.status).not.toBe(503);
    expectEveryCallPrefixedAndKeyed(gw);
  });

  it('passes other /v1 routes through the prefix with the key, whatever key the client sends', async () => {
    const { node, gw, url } = await hostedSetup();
    for (const path of ['/v1', '/v1/estimate_gas_price', '/v1/estimate_gas_price?ledger_version=990']) {
      const via = await call(url, path, { headers: { 'x-api-key': 'client-guess', 'accept-encoding': 'identity' } });
      const direct = await call(node.url, path, { headers: { 'accept-encoding': 'identity' } });
      expect(via.status, `${path}: ${via.body.toString().slice(0, 200)}`).toBe(200);
      expect(via.body.equals(direct.body), path).toBe(true);
    }
    const passthrough = gw.seen.filter(
      (s) =>
        s.url.includes('/estimate_gas_price') || (s.url === `${PREFIX}/v1` && s.headers['user-agent'] === undefined),
    );
    expect(passthrough.some((s) => s.url === `${PREFIX}/v1/estimate_gas_price?ledger_version=990`)).toBe(true);
    expectEveryCallPrefixedAndKeyed(gw);
  });

  it('works for the Aptos SDK unchanged: aptos.view fetches the ABI through the prefix', async () => {
    const { node, gw, url } = await hostedSetup({ vendor: 'aptos' });
    const aptos = new Aptos(new AptosConfig({ network: Network.CUSTOM, fullnode: `${url}/v1` }));
    expect(
      await aptos.view({
        payload: { function: '0x1::sim::balance', functionArguments: [OWNER] },
        options: { ledgerVersion: 990 },
      }),
    ).toEqual([String(simBalance(OWNER, 990n))]);
    expect(node.counters.byRoute.module).toBeGreaterThan(0);
    expect((await aptos.getLedgerInfo()).chain_id).toBe(4);
    expectEveryCallPrefixedAndKeyed(gw);
  });

  it("a wrong key is a broken node (503 error body), never the gateway's HTML", async () => {
    const node = await sim({ startVersion: 1000n });
    const gw = await gateway(node.url, PREFIX, KEY);
    const { url } = await proxy([{ url: gw.url, name: 'hosted', headers: { [KEY.name]: 'expired' } }], {
      routing: QUIET_ROUTING,
    });
    for (const reply of [await rawItem(url, '0x01', { version: 990 }), await call(url, '/v1')]) {
      expect(reply.status).toBe(503);
      expect(reply.headers['content-type']).toMatch(/^application\/json/);
      const body = reply.json();
      expect(Object.keys(body).sort()).toEqual(['error_code', 'message', 'vm_error_code']);
      expect(body.message).toMatch(/401/);
    }
    expect(node.counters.byRoute.raw_item).toBe(0);
  });
});
