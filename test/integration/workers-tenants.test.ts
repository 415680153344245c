// Keys change with SIGHUP on every worker (api.md §10.2): with server.workers: 2,
// a key added to the file works and a key removed is refused after the reload,
// whichever worker a connection lands on, and each worker says it reloaded.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { cliConfig, configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { sha256Hex } from '../helpers/bytes.js';

useCliBuild();

function config(port: number, node: SimNode, key: string): string {
  return cliConfig(port, node, {
    server: { workers: 2 },
    tenants: { anonymous: {}, list: [{ name: 'wallet', keys: [{ sha256: sha256Hex(key) }] }] },
  });
}

/** Statuses of `n` requests with `key`, each on a fresh connection, so they spread over the workers. */
async function statuses(url: string, key: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await request(`${url}/v1`, { headers: { authorization: `Bearer ${key}` }, reset: true });
    out.push(res.statusCode);
    await res.body.dump();
  }
  return out;
}

describe('tenants with server.workers: 2', () => {
  it('SIGHUP adds and removes a key on every worker', async () => {
    const node = await sim();
    const port = await freePort();
    const file = configFile(`workers-tenants-${port}.yaml`, config(port, node, 'old-key'));
    const cli = await startCli(file, port);
    const listening = (): number => [...cli.output().matchAll(/"msg":"ledger-proxy listening"/g)].length;
    await until(() => listening() === 2, 10_000, 'both workers listening');
    expect(await statuses(cli.url, 'old-key', 20)).toEqual(Array(20).fill(200));
    expect(await statuses(cli.url, 'new-key', 5)).toEqual(Array(5).fill(401));

    configFile(`workers-tenants-${port}.yaml`, config(port, node, 'new-key'));
    cli.child.kill('SIGHUP');
    const reloadedPids = (): Set<string> =>
      new Set([...cli.output().matchAll(/"pid":(\d+)[^\n]*"msg":"tenants reloaded"/g)].map((m) => m[1]!));
    await until(() => reloadedPids().size === 2, 10_000, 'both workers to reload tenants');
    expect(await statuses(cli.url, 'new-key', 20)).toEqual(Array(20).fill(200));
    expect(await statuses(cli.url, 'old-key', 20)).toEqual(Array(20).fill(401));
    cli.child.kill('SIGTERM');
    await cli.exited;
  });
});
