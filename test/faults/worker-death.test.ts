// A worker of server.workers: 2 is SIGKILLed while fresh connections keep coming
// and the admin listener is scraped and probed. No request may hang: each gets an
// answer or a close within its bound. The primary lives on, starts a new worker,
// and its /metrics answers every scrape in time while that worker boots (leaving
// it out, and saying so, until it can answer).
//
// The death is also timed the way a busy primary meets it: the primary is stopped
// (SIGSTOP) while connections and admin requests arrive and the worker dies, and
// continued, so it handles them before it has noticed the death.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { cliConfig, type Cli, configFile, startCli, useCliBuild } from '../helpers/cli.js';
import { probeLoad, probeOnce, tally } from '../helpers/probe.js';
import { freePort } from '../helpers/free-port.js';
import { parsePrometheus, sampleValue } from '../helpers/prometheus.js';
import { sim } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

useCliBuild();

/** A request not answered or closed within this is a hang. */
const BOUND_MS = 4000;
/** An admin scrape or probe must answer within this (prom-client's own wait was 5 s). */
const SCRAPE_BOUND_MS = 3000;
const KILL_AT_MS = 800;
const LOAD_MS = 3000;

function config(port: number, adminPort: number, node: SimNode): string {
  return cliConfig(port, node, { server: { workers: 2 }, admin: { host: '127.0.0.1', port: adminPort } });
}

async function status(url: string, init: { dispatcher?: Agent } = {}): Promise<number> {
  const res = await request(url, {
    reset: init.dispatcher === undefined,
    dispatcher: init.dispatcher,
    signal: AbortSignal.timeout(SCRAPE_BOUND_MS),
  });
  await res.body.dump();
  return res.statusCode;
}

async function startWorkers(): Promise<{ cli: Cli; admin: string; listening(): number[] }> {
  const node = await sim();
  const [port, adminPort] = [await freePort(), await freePort()];
  const cli = await startCli(configFile(`worker-death-${port}.yaml`, config(port, adminPort, node)), port);
  const admin = `http://127.0.0.1:${adminPort}`;
  const listening = (): number[] =>
    [...cli.output().matchAll(/"pid":(\d+)[^\n]*"msg":"ledger-proxy listening"/g)].map((m) => Number(m[1]));
  await until(
    () => listening().length === 2,
    10_000,
    () => `both workers listening:\n${cli.output()}`,
  );
  await until(async () => (await status(`${admin}/readyz`)) === 200, 10_000, 'ready');
  return { cli, admin, listening };
}

/** True once pid has exited: gone, or a zombie that its stopped parent has not reaped. */
function exited(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.[0] === 'Z';
  } catch {
    return true;
  }
}

interface Scrape {
  path: string;
  sentAt: number;
  ms: number;
  status: number | 'error';
  body: string;
}

/** Scrapes `paths` of the admin listener in turn until `stop()` is true, each bounded. */
async function scrapeUntil(admin: string, paths: string[], stop: () => boolean): Promise<Scrape[]> {
  const scrapes: Scrape[] = [];
  const started = performance.now();
  for (let i = 0; !stop(); i++) {
    const path = paths[i % paths.length];
    const sentAt = performance.now() - started;
    try {
      const res = await request(admin + path, { reset: true, signal: AbortSignal.timeout(SCRAPE_BOUND_MS + 3000) });
      const body = await res.body.text();
      scrapes.push({ path, sentAt, ms: performance.now() - started - sentAt, status: res.statusCode, body });
    } catch (err) {
      scrapes.push({ path, sentAt, ms: performance.now() - started - sentAt, status: 'error', body: String(err) });
    }
    // The scrapes' pace: a Prometheus is not a load generator.
    await new Promise((r) => setTimeout(r, 20));
  }
  return scrapes;
}

function gauge(text: string, name: string): number | undefined {
  return sampleValue(parsePrometheus(text), name);
}

describe('server.workers: 2, a worker SIGKILLed under load', () => {
  it('every request gets an answer or a close in time; the primary starts another worker; /metrics and /readyz answer in time throughout', async () => {
    const { cli, admin, listening } = await startWorkers();
    const victim = listening()[0];

    let loadDone = false;
    const scraping = scrapeUntil(admin, ['/metrics', '/readyz'], () => loadDone && listening().length >= 3);
    const samples = await probeLoad({
      url: `${cli.url}/v1`,
      loops: 12,
      durationMs: LOAD_MS,
      boundMs: BOUND_MS,
      at: {
        atMs: KILL_AT_MS,
        run: () => {
          process.kill(victim, 'SIGKILL');
        },
      },
    });
    loadDone = true;
    await until(
      () => listening().length >= 3,
      10_000,
      () => `a new worker listening after the kill:\n${cli.output().slice(-3000)}`,
    );
    const scrapes = await scraping;

    const counts = tally(samples);
    expect(counts.hang ?? 0, `outcomes ${JSON.stringify(counts)}`).toBe(0);
    // The surviving worker serves: a request sent well after the kill is answered.
    const late = samples.filter((s) => s.sentAt > KILL_AT_MS + 1000);
    expect(late.length).toBeGreaterThan(50);
    expect(tally(late), cli.output().slice(-3000)).toEqual({ '200': late.length });
    expect(cli.child.exitCode, 'the primary is alive').toBeNull();

    // Every scrape and probe answered within its bound; /metrics always 200.
    const slow = scrapes.filter(
      (s) => s.ms > SCRAPE_BOUND_MS || s.status === 'error' || (s.path === '/metrics' && s.status !== 200),
    );
    expect(
      slow.map(
        (s) =>
          `${s.path} at ${Math.round(s.sentAt)} ms: ${s.status} after ${Math.round(s.ms)} ms ${s.status === 200 ? '' : s.body.slice(0, 200)}`,
      ),
      `${scrapes.length} scrapes`,
    ).toEqual([]);
    const metrics = scrapes.filter((s) => s.path === '/metrics');
    // A scrape that left a worker out says so.
    expect(metrics.some((s) => gauge(s.body, 'ledger_proxy_workers_scraped') === 1)).toBe(true);
    for (const s of metrics) expect(gauge(s.body, 'ledger_proxy_workers')).toBe(2);

    // Ready again with the new worker; its metrics join the next scrape.
    await until(async () => (await status(`${admin}/readyz`)) === 200, 10_000, 'ready again');
    await until(
      async () =>
        gauge(
          await request(`${admin}/metrics`, { reset: true }).then((r) => r.body.text()),
          'ledger_proxy_workers_scraped',
        ) === 2,
      10_000,
      'both workers in a scrape again',
    );
  });

  it('a worker that dies while the primary is busy: the requests the primary meets first are answered or closed, and the primary lives on', async () => {
    const { cli, admin, listening } = await startWorkers();
    const [victim] = listening();
    // Admin connections kept open, so their requests are read in the same turn as the news of the death.
    const adminAgent = new Agent({ connections: 4, keepAliveTimeout: 30_000 });
    const publicAgent = new Agent({ connections: 16, pipelining: 0 });
    let connected = 0;
    publicAgent.on('connect', () => connected++);
    try {
      await Promise.all(Array.from({ length: 4 }, () => status(`${admin}/healthz`, { dispatcher: adminAgent })));
      const primary = cli.child.pid!;
      process.kill(primary, 'SIGSTOP');
      let continued = false;
      try {
        const asked = ['/readyz', '/metrics', '/readyz', '/metrics'].map((path) =>
          status(admin + path, { dispatcher: adminAgent }).then(
            (code) => `${path} ${code}`,
            (err: Error) => `${path} ${err.name}`,
          ),
        );
        const fresh = Array.from({ length: 16 }, () => probeOnce(publicAgent, `${cli.url}/v1`, BOUND_MS));
        // The kernel accepts the connections for the stopped primary; each request is written once its connection is.
        await until(
          () => connected === 16,
          2000,
          () => `16 fresh connections (${connected} so far)`,
        );
        process.kill(victim, 'SIGKILL');
        await until(() => exited(victim), 2000, 'the killed worker to exit');
        process.kill(primary, 'SIGCONT');
        continued = true;
        const outcomes = await Promise.all(fresh);
        expect(
          outcomes.filter((o) => o.kind === 'hang'),
          JSON.stringify(outcomes),
        ).toEqual([]);
        const answers = await Promise.all(asked);
        expect(cli.child.exitCode, `the primary is alive:\n${cli.output().slice(-3000)}`).toBeNull();
        for (const answer of answers) expect(answer).toMatch(/^\/(readyz (200|503)|metrics 200)$/);
      } finally {
        if (!continued) process.kill(primary, 'SIGCONT');
      }
      await until(
        () => listening().length >= 3,
        10_000,
        () => `a new worker listening after the kill:\n${cli.output().slice(-3000)}`,
      );
      await until(async () => (await status(`${admin}/readyz`)) === 200, 10_000, 'ready again');
      expect(cli.output()).not.toContain('Unhandled');
    } finally {
      await Promise.all([adminAgent.destroy(), publicAgent.destroy()]);
    }
  });
});
