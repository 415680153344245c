// The vendor from the nodes (vendor: auto, the default): the proxy speaks the
// header prefix and BCS media type the nodes answer with; a configured vendor
// the nodes contradict means not ready, naming both, never misnamed headers.
import { describe, expect, it } from 'vitest';
import { SIM_MODULE_ADDRESS } from '../../src/sim/index.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import { u64le } from '../helpers/cache.js';
import { freePort } from '../helpers/free-port.js';
import { call, capturedLog, proxy, rawItem, sim, QUIET } from '../helpers/proxy.js';

describe('vendor: auto', () => {
  it('in front of aptos nodes: X-APTOS- headers on hits and misses, and the aptos BCS view media type accepted', async () => {
    const node = await sim({ vendor: 'aptos', startVersion: 1000n });
    const log = capturedLog();
    const p = await proxy([node], QUIET, { logger: log.logger });
    expect(p.app.config.vendor).toBe('auto');
    const miss = await rawItem(p.url, '0x01', { version: 990 });
    const hit = await rawItem(p.url, '0x01', { version: 990 });
    for (const reply of [miss, hit]) {
      expect(reply.headers['x-aptos-ledger-version']).toBe('1000');
      expect(reply.headers['x-node-ledger-version']).toBeUndefined();
    }
    expect(hit.headers['x-cache']).toBe('HIT');
    const body = Buffer.from(
      encodeViewRequest({
        address: SIM_MODULE_ADDRESS,
        module: 'sim',
        function: 'add',
        typeArgs: [],
        args: [u64le(40n), u64le(2n)],
      }),
    );
    const view = await call(p.url, '/v1/view?ledger_version=990', {
      headers: { 'content-type': 'application/x.aptos.view_function+bcs', accept: 'application/json' },
      body,
    });
    expect([view.status, view.json()]).toEqual([200, ['42']]);
    const nodeType = await call(p.url, '/v1/view?ledger_version=990', {
      headers: { 'content-type': 'application/x.node.view_function+bcs', accept: 'application/json' },
      body,
    });
    expect(nodeType.status).toBe(400);
    expect(log.lines.some((l) => String(l.msg).startsWith('vendor adopted'))).toBe(true);
  });

  it('a configured vendor the nodes contradict: not ready, naming both, on reads, passthrough and /readyz', async () => {
    const node = await sim({ vendor: 'aptos', startVersion: 1000n });
    const admin = await freePort();
    const p = await proxy([node], { ...QUIET, vendor: 'node', admin: { host: '127.0.0.1', port: admin } });
    for (const reply of [await rawItem(p.url, '0x01', { version: 990 }), await call(p.url, '/v1')]) {
      expect(reply.status).toBe(503);
      expect(reply.json().message).toMatch(
        /^not ready: vendor is configured as node \(X-NODE- headers\), but the nodes answer with other headers \(node0: X-APTOS-\)/,
      );
    }
    expect((await call(`http://127.0.0.1:${admin}`, '/readyz')).status).toBe(503);
    expect(node.counters.byRoute.raw_item).toBe(0);
  });
});
