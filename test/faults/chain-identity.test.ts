// Chain identity under faults (api.md §8): without a configured
// chainId, nodes on two chains make the proxy not ready (nothing served, no reply
// without ledger headers); a node down from the start has no vote; a devnet reset
// reported by every node for two probe rounds is adopted, and not before.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { ManualProbes } from '../helpers/probes.js';
import { freePort } from '../helpers/free-port.js';
import { call, ledgerHeaders, proxy, rawItem, sim, viewJson, QUIET } from '../helpers/proxy.js';

describe('chain identity', () => {
  it('two nodes on chains 4 and 5, no chainId: not ready, every read and passthrough a 503 naming the chains, nothing reaches a node', async () => {
    const four = await sim({ chainId: 4 });
    const five = await sim({ chainId: 5 });
    const { app, url } = await proxy([four, five], { ...QUIET, admin: { host: '127.0.0.1', port: await freePort() } });
    const readyz = await call(app.adminUrl()!, '/readyz');
    expect(readyz.status).toBe(503);
    const before = four.counters.total + five.counters.total;
    for (const reply of [
      await rawItem(url, '0x01', { version: 900 }),
      await rawItem(url, '0x01'),
      await viewJson(url, '0x1::sim::add', ['1', '2'], { version: 900 }),
      await call(url, '/v1/estimate_gas_price'),
    ]) {
      expect(reply.status, reply.body.toString()).toBe(503);
      expect(reply.json().error_code).toBe('internal_error');
      expect(reply.json().message).toMatch(/not ready.*node0: chain 4.*node1: chain 5/);
      expect(reply.json().message).not.toMatch(/127\.0\.0\.1|http:/);
    }
    expect(four.counters.total + five.counters.total).toBe(before);
  });

  it('two nodes on one chain, one of them down from the start: the one that answered sets the chain; pinned reads carry the seven headers', async () => {
    const up = await sim({ chainId: 4 });
    const down = await sim({ chainId: 4 });
    await down.stop();
    const { app, url } = await proxy([up, down], QUIET);
    expect(app.pool.chainId()).toBe(4);
    expect(app.pool.ready()).toBe(true);
    for (const reply of [
      await rawItem(url, '0x01', { version: 900 }),
      await rawItem(url, '0x01', { version: 900 }),
      await rawItem(url, '0x01'),
    ]) {
      expect(reply.status).toBe(200);
      expect(Object.keys(ledgerHeaders(reply))).toHaveLength(7);
      expect(reply.headers['x-node-chain-id']).toBe('4');
    }
  });

  it('a chain change reported by every node is adopted after two probe rounds, with a warning, and not after one', async () => {
    const node = await sim({ chainId: 4 });
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      upstreams: [{ url: node.url, name: 'node0' }],
      ...QUIET,
    });
    const probes = new ManualProbes();
    const app: App = await buildApp(config, { logger, probeSchedule: probes });
    apps.push(app);
    const url = await app.listen();
    expect((await rawItem(url, '0x01', { version: 900 })).headers['x-node-chain-id']).toBe('4');

    node.ledger.setChainId(5);
    await probes.round();
    // One round: the node is quarantined, the chain stays 4, reads are refused.
    expect(app.pool.chainId()).toBe(4);
    expect(app.pool.health(app.pool.nodes[0])).toBe('quarantined');
    expect((await rawItem(url, '0x01', { version: 901 })).status).toBe(503);

    await probes.round();
    expect(app.pool.chainId()).toBe(5);
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
    expect(lines.some((l) => l.level === 40 && /chain changed/.test(String(l.msg)))).toBe(true);
    const after = await rawItem(url, '0x01', { version: 900 });
    expect(after.status).toBe(200);
    expect(after.headers['x-node-chain-id']).toBe('5');
    // The old chain's entry is not served for the new one.
    expect(after.headers['x-cache']).toBe('MISS');
  });
});

describe('chain identity across a reload', () => {
  it('a reload to all-new nodes keeps the established chain: same chain served at once, another chain quarantined', async () => {
    const first = await sim({ chainId: 4 });
    const { app, url } = await proxy([first], QUIET);
    expect(app.pool.chainId()).toBe(4);
    const same = await sim({ chainId: 4 });
    await app.reload({
      ...app.config,
      upstreams: parseConfig({ upstreams: [{ url: same.url, name: 'same' }] }).upstreams,
    });
    expect(app.pool.chainId()).toBe(4);
    expect((await rawItem(url, '0x01', { version: 900 })).status).toBe(200);
    expect(same.counters.byRoute.raw_item).toBe(1);

    const other = await sim({ chainId: 5 });
    await app.reload({
      ...app.config,
      upstreams: parseConfig({ upstreams: [{ url: other.url, name: 'other' }] }).upstreams,
    });
    expect(app.pool.chainId()).toBe(4);
    expect(app.pool.health(app.pool.nodes[0])).toBe('quarantined');
    expect((await rawItem(url, '0x01', { version: 901 })).status).toBe(503);
    expect(other.counters.byRoute.raw_item).toBe(0);
  });
});

const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
