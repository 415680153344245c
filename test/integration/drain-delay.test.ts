// server.drainDelayMs: on SIGTERM /readyz fails at once, the public listener
// still accepts and answers new connections for drainDelayMs, and only then is
// it closed and the drain starts; the process exits 0. In one process and with
// two workers (the primary's /readyz fails at once, each worker keeps accepting).
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { cliConfig, configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { connectionRefused, probeOnce } from '../helpers/probe.js';
import { freePort } from '../helpers/free-port.js';
import { sim } from '../helpers/proxy.js';
import { until, within } from '../helpers/until.js';

useCliBuild();

const DRAIN_DELAY_MS = 1500;

function config(port: number, adminPort: number, node: SimNode, workers: number): string {
  return cliConfig(port, node, {
    server: { workers, drainDelayMs: DRAIN_DELAY_MS },
    admin: { host: '127.0.0.1', port: adminPort },
  });
}

async function readyz(admin: string): Promise<number | string> {
  try {
    const res = await request(`${admin}/readyz`, { reset: true, signal: AbortSignal.timeout(2000) });
    await res.body.dump();
    return res.statusCode;
  } catch (err) {
    return (err as { code?: string }).code ?? 'error';
  }
}

describe('server.drainDelayMs', () => {
  it.each([
    { workers: 1, label: 'one process' },
    { workers: 2, label: 'two workers' },
  ])('$label: not ready at once, new connections answered for the delay, then refused; exit 0', async ({ workers }) => {
    const node = await sim();
    const [port, adminPort] = [await freePort(), await freePort()];
    const cli = await startCli(configFile(`drain-delay-${port}.yaml`, config(port, adminPort, node, workers)), port);
    const admin = `http://127.0.0.1:${adminPort}`;
    const listening = (): number => [...cli.output().matchAll(/"msg":"ledger-proxy listening"/g)].length;
    await until(
      () => listening() === workers,
      10_000,
      () => `${workers} listening:\n${cli.output()}`,
    );
    await until(async () => (await readyz(admin)) === 200, 10_000, 'ready');

    const agent = new Agent({ pipelining: 0 });
    const signalledAt = performance.now();
    cli.child.kill('SIGTERM');
    await until(async () => (await readyz(admin)) === 503, 500, '/readyz failing within 500 ms of SIGTERM');

    // Fresh connections keep being answered while the delay lasts.
    const answered: Array<{ at: number; outcome: string }> = [];
    while (performance.now() - signalledAt < DRAIN_DELAY_MS - 300) {
      const at = performance.now() - signalledAt;
      const outcome = await probeOnce(agent, `${cli.url}/v1`, 2000);
      answered.push({ at, outcome: outcome.kind === 'answer' ? String(outcome.status) : outcome.kind });
      // A fresh connection every 50 ms or so, through the delay.
      await new Promise((r) => setTimeout(r, 50));
    }
    await agent.destroy();
    expect(answered.length).toBeGreaterThan(5);
    expect(
      answered.filter((a) => a.outcome !== '200'),
      cli.output().slice(-2000),
    ).toEqual([]);

    // Then the listener closes: never before the delay, soon after it.
    await until(() => connectionRefused(port), DRAIN_DELAY_MS + 3000, 'the listener closed after the delay');
    expect(performance.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_DELAY_MS);
    const exit = await within(cli.exited, 10_000, () => `the proxy exiting:\n${cli.output().slice(-2000)}`);
    expect(exit, cli.output().slice(-2000)).toEqual({ code: 0, signal: null });
  });
});
