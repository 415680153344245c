// server.workers: 2: the CLI forks two workers sharing the port; the
// primary's /metrics adds up every worker's counters, /readyz asks each worker,
// SIGHUP reaches every worker, and SIGTERM drains them all and exits 0, each process's
// last line saying why it stopped and how long it took.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { cliConfig, configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { promtool, requirePromtool } from '../helpers/monitoring-tools.js';
import { freePort } from '../helpers/free-port.js';
import { sim } from '../helpers/proxy.js';
import { until, within } from '../helpers/until.js';

useCliBuild();
await requirePromtool();

function config(port: number, adminPort: number, node: SimNode, level = 'info'): string {
  return cliConfig(port, node, {
    server: { workers: 2 },
    admin: { host: '127.0.0.1', port: adminPort },
    log: { level },
  });
}

/** The value of one sample line of the Prometheus text, summed over label sets matching `labels`. */
function total(text: string, name: string, labels: RegExp = /.*/): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m && labels.test(m[1] ?? '')) sum += Number(m[2]);
  }
  return sum;
}

async function text(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

describe('server.workers: 2', () => {
  it('serves from two workers, aggregates their metrics, relays SIGHUP and drains both on SIGTERM', async () => {
    const node = await sim();
    const [port, adminPort] = [await freePort(), await freePort()];
    const file = configFile(`workers-${port}.yaml`, config(port, adminPort, node));
    const cli = await startCli(file, port);
    const admin = `http://127.0.0.1:${adminPort}`;
    const workerPids = (): Set<string> =>
      new Set([...cli.output().matchAll(/"pid":(\d+)[^\n]*"msg":"ledger-proxy listening"/g)].map((m) => m[1]));
    await until(
      () => workerPids().size >= 2,
      5000,
      () => `both workers listening:\n${cli.output()}`,
    );
    expect(workerPids().size, cli.output()).toBe(2);

    // A fresh connection per request: the primary spreads connections over the workers.
    const N = 40;
    for (let i = 0; i < N; i++) {
      const res = await request(`${cli.url}/v1/estimate_gas_price?i=${i}`, { reset: true });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    }
    const metrics = await text(`${admin}/metrics`);
    expect(metrics.status, metrics.body).toBe(200);
    // Every worker's requests, counted once: the N above plus startCli's GET /v1 probes (some).
    expect(total(metrics.body, 'ledger_proxy_requests_total', /endpoint="passthrough"/)).toBeGreaterThanOrEqual(N);
    expect(total(metrics.body, 'ledger_proxy_requests_total', /endpoint="passthrough"/)).toBeLessThan(N + 40);
    // Both workers in the scrape, and the aggregate is clean Prometheus text.
    expect(total(metrics.body, 'ledger_proxy_workers_scraped')).toBe(2);
    expect(await promtool(['check', 'metrics'], { stdin: metrics.body })).toEqual({ code: 0, out: '' });
    // The node's state is the share of workers that see it: 1 when both agree.
    expect(total(metrics.body, 'ledger_proxy_upstream_state', /state="healthy"/)).toBe(1);

    const ready = await text(`${admin}/readyz`);
    expect(ready.status, ready.body).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ ready: true, upstreams: [{ name: 'sim', state: 'healthy' }] });

    // SIGHUP: each worker re-reads the file and reports the change.
    configFile(`workers-${port}.yaml`, config(port, adminPort, node, 'debug'));
    cli.child.kill('SIGHUP');
    const reloaded = (): number => [...cli.output().matchAll(/"key":"log.level"[^\n]*config reload: applied/g)].length;
    await until(
      () => reloaded() >= 2,
      5000,
      () => `both workers reloaded:\n${cli.output()}`,
    );
    expect(reloaded(), cli.output()).toBe(2);

    cli.child.kill('SIGTERM');
    const exit = await within(cli.exited, 10_000, () => `the proxy exiting after SIGTERM:\n${cli.output()}`);
    expect(exit, cli.output()).toEqual({ code: 0, signal: null });
    for (const pid of workerPids()) expect(() => process.kill(Number(pid), 0)).toThrow();

    // Every line, the primary's and the workers', is JSON without a repeated key
    // (JSON.parse keeps the last of two, so the line would read back shorter).
    const lines = cli
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(lines.some((line) => line.includes('"msg":"worker started"'))).toBe(true);
    for (const line of lines) expect(JSON.stringify(JSON.parse(line)), 'a key twice on one line').toBe(line);
    // Each worker's last line says why it stopped and how long its drain took; the primary's, last of all, the whole stop.
    const stopped = lines.map((line) => JSON.parse(line)).filter((line) => /^stopped on SIGTERM/.test(line.msg));
    expect(
      stopped
        .filter((line) => typeof line.drainMs === 'number')
        .map((line) => String(line.pid))
        .sort(),
    ).toEqual([...workerPids()].sort());
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ signal: 'SIGTERM', workers: 2 });
    expect(JSON.parse(lines.at(-1)!).msg).toMatch(/^stopped on SIGTERM: every worker drained and exited in \d+ ms$/);
  });
});
