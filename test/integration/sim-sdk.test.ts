// The real client the proxy must serve (Aptos TS SDK 6.x) works against the sim
// with vendor 'aptos': getLedgerInfo, view (ABI fetch + BCS request) and viewJson.
import { Aptos, AptosConfig, Network } from '@aptos-labs/ts-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simBalance, startSim, type SimNode } from '../../src/sim/index.js';

describe('Aptos TS SDK against the simulated node', () => {
  let sim: SimNode;
  let aptos: Aptos;
  const owner = '0x' + '42'.repeat(32);

  beforeAll(async () => {
    sim = await startSim({ vendor: 'aptos', chainId: 4 });
    aptos = new Aptos(new AptosConfig({ network: Network.CUSTOM, fullnode: `${sim.url}/v1` }));
  });
  afterAll(async () => {
    await sim.close();
  });

  it('reads the ledger info', async () => {
    const info = await aptos.getLedgerInfo();
    expect(info).toMatchObject({ chain_id: 4, ledger_version: '1000', node_role: 'full_node' });
  });

  it('calls view functions through the module ABI and a BCS request', async () => {
    expect(await aptos.view({ payload: { function: '0x1::sim::balance', functionArguments: [owner] } })).toEqual([
      String(simBalance(owner, 1000n)),
    ]);
    expect(await aptos.view({ payload: { function: '0x1::sim::pair', functionArguments: [9] } })).toEqual(['4', false]);
    expect(
      await aptos.view({ payload: { function: '0x1::sim::type_name', typeArguments: ['u64'], functionArguments: [] } }),
    ).toEqual(['u64']);
    expect(
      await aptos.view({
        payload: { function: '0x1::sim::balance', functionArguments: [owner] },
        options: { ledgerVersion: 990 },
      }),
    ).toEqual([String(simBalance(owner, 990n))]);
    const bcsViews = sim.counters.requests.filter((r) => r.url.startsWith('/v1/view'));
    expect(bcsViews.every((r) => r.headers['content-type'] === 'application/x.aptos.view_function+bcs')).toBe(true);
    expect(sim.counters.byRoute.module).toBeGreaterThan(0);
  });

  it('calls view functions with a JSON request', async () => {
    expect(await aptos.viewJson({ payload: { function: '0x1::sim::add', functionArguments: ['2', '40'] } })).toEqual([
      '42',
    ]);
  });

  it('surfaces a Move abort as the node error', async () => {
    await expect(
      aptos.view({ payload: { function: '0x1::sim::always_abort', functionArguments: [] } }),
    ).rejects.toThrow(/4016|abort/i);
  });
});
