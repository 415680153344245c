// Signals to the real CLI (node main.js --config FILE, built from src/). On SIGTERM it stops
// accepting connections, drains the requests in flight (every one gets its
// complete reply), and exits 0 within a few seconds, its last line saying why and
// how long the drain took. On SIGHUP it re-reads the file and swaps the upstream
// list. An error nobody caught ends it with a last line that says so.
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { simBalance, simTableItem } from '../../src/sim/index.js';
import { cliConfig, configFile, jsonLines, startCliFor, useCliBuild } from '../helpers/cli.js';
import { connectionRefused } from '../helpers/probe.js';
import { QUIET_ROUTING, sim } from '../helpers/proxy.js';
import { until, within } from '../helpers/until.js';

const HANDLE = '0x' + 'ef'.repeat(32);
const SLOW_MS = 300;
const agents: Agent[] = [];

useCliBuild();
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.destroy();
});

/** What the CLI's config says beside its one upstream: probes left to the test, warnings only. */
const SETTINGS = { routing: QUIET_ROUTING, log: { level: 'warn' } };

interface Outcome {
  status: number;
  body: Buffer;
  contentLength?: string;
}

describe('graceful shutdown of the CLI', () => {
  // keepAlive: the clients reuse connections (as wallets' HTTP clients do), so the
  // in-flight requests' connections stay open after their replies unless the proxy closes them.
  it.each([
    { keepAlive: true, label: 'keep-alive clients' },
    { keepAlive: false, label: 'Connection: close clients' },
  ])(
    'SIGTERM with ~50 requests in flight ($label): every one gets a complete 200, new connections are refused, exit 0 within 5 s',
    async ({ keepAlive }) => {
      const node = await sim();
      const cli = await startCliFor(node, SETTINGS);
      const gasPriceJson = Buffer.from(await (await request(`${node.url}/v1/estimate_gas_price`)).body.arrayBuffer());
      node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: ['view', 'raw_item', 'gas_price'] });

      const owners = Array.from({ length: 30 }, (_, i) => '0x' + (i + 1).toString(16).padStart(64, '0'));
      const keys = Array.from({ length: 256 }, (_, i) => Buffer.from([i, 7]))
        .filter((k) => simTableItem(HANDLE, k, 1000n) !== null)
        .slice(0, 10);
      expect(keys).toHaveLength(10);

      // Keep-alive connections, as a wallet's HTTP client would use.
      const agent = new Agent({ connections: 64 });
      agents.push(agent);
      const expected: Buffer[] = [];
      let settled = 0;
      const send = async (
        path: string,
        init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
      ): Promise<Outcome> => {
        try {
          const res = await request(cli.url + path, {
            dispatcher: agent,
            reset: !keepAlive,
            method: init.method ?? 'GET',
            headers: init.headers,
            body: init.body,
          });
          const body = Buffer.from(await res.body.arrayBuffer());
          const cl = res.headers['content-length'];
          return { status: res.statusCode, body, contentLength: typeof cl === 'string' ? cl : undefined };
        } finally {
          settled++;
        }
      };

      const before = node.counters.total;
      const inFlight: Array<Promise<Outcome>> = [];
      for (const owner of owners) {
        expected.push(Buffer.from(JSON.stringify([String(simBalance(owner, 990n))])));
        inFlight.push(
          send('/v1/view?ledger_version=990', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ function: '0x1::sim::balance', type_arguments: [], arguments: [owner] }),
          }),
        );
      }
      for (const key of keys) {
        expected.push(simTableItem(HANDLE, key, 1000n)!);
        inFlight.push(
          send(`/v1/tables/${HANDLE}/raw_item`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
            body: JSON.stringify({ key: '0x' + key.toString('hex') }),
          }),
        );
      }
      for (let i = 0; i < 10; i++) {
        expected.push(gasPriceJson);
        inFlight.push(send(`/v1/estimate_gas_price?i=${i}`, {}));
      }
      const all = Promise.allSettled(inFlight);

      // Every request has reached the slow node: then stop the proxy.
      await until(
        () => node.counters.total - before >= inFlight.length,
        5000,
        () => `${inFlight.length} requests at the node (${node.counters.total - before} so far)`,
      );
      expect(node.counters.total - before).toBe(inFlight.length);
      const pendingAtSignal = inFlight.length - settled;
      expect(pendingAtSignal, 'requests still in flight when SIGTERM is sent').toBeGreaterThan(0);
      cli.child.kill('SIGTERM');

      // While it drains, new connections are refused.
      await until(() => connectionRefused(cli.port), 2000, 'a new connection refused once SIGTERM is handled');

      const results = await within(all, 5000, 'the in-flight requests');
      results.forEach((r, i) => {
        expect(
          r.status,
          `request ${i}: ${r.status === 'rejected' ? String((r as PromiseRejectedResult).reason) : ''}\n${cli.output()}`,
        ).toBe('fulfilled');
        const outcome = (r as PromiseFulfilledResult<Outcome>).value;
        expect(outcome.status, `request ${i}: ${outcome.body.toString('utf8')}`).toBe(200);
        expect(outcome.body.toString('hex'), `request ${i}`).toBe(expected[i].toString('hex'));
        if (outcome.contentLength !== undefined) expect(Number(outcome.contentLength)).toBe(outcome.body.length);
      });

      const exit = await within(
        cli.exited,
        5000,
        'the proxy exiting after SIGTERM (all replies were sent; it waits on the idle keep-alive connections)',
      );
      expect(exit, cli.output()).toEqual({ code: 0, signal: null });
      expect(await connectionRefused(cli.port)).toBe(true);
      // Nothing at error level or above was logged (log level warn: warnings are allowed).
      for (const line of cli
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))) {
        expect(JSON.parse(line).level, line).toBeLessThan(50);
      }
    },
  );

  it('SIGTERM with idle keep-alive connections open still exits 0 promptly', async () => {
    const node = await sim();
    const cli = await startCliFor(node, SETTINGS);
    const agent = new Agent({ connections: 4, keepAliveTimeout: 60_000 });
    agents.push(agent);
    for (let i = 0; i < 3; i++) {
      const res = await request(`${cli.url}/v1`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      await res.body.arrayBuffer();
    }
    const started = Date.now();
    cli.child.kill('SIGTERM');
    const exit = await within(cli.exited, 5000, 'the proxy exiting after SIGTERM');
    expect(exit, cli.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await connectionRefused(cli.port)).toBe(true);
  });

  it('SIGINT drains and exits 0 as well', async () => {
    const node = await sim();
    const cli = await startCliFor(node, SETTINGS);
    node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: ['view'] });
    const before = node.counters.total;
    // Connection: close, so this checks the signal handling alone (keep-alive: the SIGTERM test).
    const pending = request(`${cli.url}/v1/view`, {
      reset: true,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['2', '40'] }),
    }).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }));
    await until(() => node.counters.total > before, 5000, 'the request at the node');
    cli.child.kill('SIGINT');
    expect(await within(pending, 5000, 'the in-flight request')).toEqual({ status: 200, body: '["42"]' });
    expect(await within(cli.exited, 5000, 'the proxy exiting after SIGINT')).toEqual({ code: 0, signal: null });
  });
});

describe('the last line of the CLI', () => {
  /** What the log shows at info: the last line is at info when nothing failed. */
  const AT_INFO = { routing: QUIET_ROUTING, log: { level: 'info', format: 'json' } };

  it('after SIGTERM says so, and how long the drain of the requests in flight took', async () => {
    const node = await sim();
    const cli = await startCliFor(node, AT_INFO);
    node.faults.set({ mode: 'slow', delayMs: SLOW_MS, routes: ['view'] });
    const before = node.counters.total;
    const pending = request(`${cli.url}/v1/view`, {
      reset: true,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['2', '40'] }),
    }).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }));
    await until(() => node.counters.total > before, 5000, 'the request at the node');
    const signalledAt = performance.now();
    cli.child.kill('SIGTERM');
    expect(await within(pending, 5000, 'the in-flight request')).toEqual({ status: 200, body: '["42"]' });
    expect(await within(cli.exited, 5000, 'the proxy exiting after SIGTERM')).toEqual({ code: 0, signal: null });
    const stoppedWithin = performance.now() - signalledAt;
    const last = jsonLines(cli.output()).at(-1)!;
    expect(last, cli.output()).toMatchObject({ level: 30, signal: 'SIGTERM' });
    expect(last.msg).toBe(`stopped on SIGTERM: requests in flight drained in ${last.drainMs} ms`);
    // The drain waited for the slow node's answer, and took no longer than the whole stop.
    expect(last.drainMs).toBeGreaterThanOrEqual(SLOW_MS / 3);
    expect(last.drainMs).toBeLessThanOrEqual(stoppedWithin);
  });

  it('after an error nobody caught says so at fatal, with the error, and the exit status is 1', async () => {
    const node = await sim();
    // A module the test plants before the CLI: on SIGUSR2 it throws where nobody catches it.
    const planted = configFile(
      'throws-on-usr2.mjs',
      "process.on('SIGUSR2', () => { throw new Error('planted by the test'); });\n",
    );
    const cli = await startCliFor(node, AT_INFO, [`--import=${planted}`]);
    cli.child.kill('SIGUSR2');
    expect(await within(cli.exited, 5000, 'the proxy exiting after the error')).toEqual({ code: 1, signal: null });
    const last = jsonLines(cli.output()).at(-1)!;
    expect(last, cli.output()).toMatchObject({
      level: 60,
      origin: 'uncaughtException',
      err: { type: 'Error', message: 'planted by the test' },
    });
    expect(last.msg).toMatch(/^stopped: an error nobody caught/);
  });
});

describe('SIGHUP reloads the upstream list of the CLI', () => {
  const add = (url: string, a: number) =>
    request(`${url}/v1/view`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: [String(a), '1'] }),
      reset: true,
    });

  it('moves reads to the upstreams of the re-read file, and keeps the old list when the file is invalid', async () => {
    const first = await sim();
    const second = await sim();
    const cli = await startCliFor(first, SETTINGS);
    const read = async (a: number): Promise<number> => {
      const res = await add(cli.url, a);
      expect(await res.body.json()).toEqual([String(a + 1)]);
      return res.statusCode;
    };
    expect(await read(1)).toBe(200);
    expect(first.counters.byRoute.view).toBe(1);

    // An invalid file: the proxy says so and goes on with the upstreams it has.
    writeFileSync(cli.configFile, 'upstreams: 7\n');
    cli.child.kill('SIGHUP');
    await until(
      () => cli.output().includes('config not reloaded'),
      5000,
      () => `"config not reloaded" in the log:\n${cli.output()}`,
    );
    // The log names the key that is wrong.
    expect(cli.output()).toContain('"keys":["upstreams"]');
    expect(await read(2)).toBe(200);
    expect(first.counters.byRoute.view).toBe(2);

    writeFileSync(cli.configFile, cliConfig(cli.port, second, SETTINGS));
    cli.child.kill('SIGHUP');
    let n = 10;
    await until(
      async () => {
        await read(n++);
        return second.counters.byRoute.view > 0;
      },
      10_000,
      'a read at the upstream of the re-read file',
    );
    const before = first.counters.byRoute.view;
    for (let i = 0; i < 5; i++) await read(100 + i);
    expect(first.counters.byRoute.view).toBe(before);
    expect(cli.child.exitCode).toBeNull();
  });
});
