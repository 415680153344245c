// The public listener's lifecycle: a start on a port in use stops with one line
// naming the key; a slow client cannot hold a connection past
// server.requestTimeoutMs, and a shutdown fails readiness first, lets requests in
// flight finish with `Connection: close`, closes idle keep-alive sockets, and ends
// by server.shutdownTimeoutMs whatever the clients do.
import { createServer, type Server } from 'node:net';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { cliConfig, configFile, runCli, startCli, useCliBuild } from '../helpers/cli.js';
import { freePort } from '../helpers/free-port.js';
import { HANDLE, proxy, sim } from '../helpers/proxy.js';
import { httpRequest, openSocket } from '../helpers/raw-socket.js';
import { until, within } from '../helpers/until.js';

useCliBuild();

const agents: Agent[] = [];
const holders: Server[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.destroy();
  for (const h of holders.splice(0)) await new Promise((r) => h.close(r));
});

const START_BOUND_MS = 45_000;

/** Another program listening on a free port of 127.0.0.1. */
async function portTaken(): Promise<number> {
  const port = await freePort();
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  return port;
}

/**
 * The CLI on `text` to its exit: its status and the lines it wrote to stderr. The
 * bound only stops a start that never ends (workers started again and again); a
 * worker's boot alone takes many seconds on a loaded machine.
 */
async function startRefused(name: string, text: string): Promise<{ code: number | null; lines: string[] }> {
  const { code, stderr } = await within(
    runCli(['--config', configFile(name, text)]),
    START_BOUND_MS,
    `the start on ${name} to end`,
  );
  return { code, lines: stderr.split('\n').filter((line) => line !== '') };
}

describe('a port in use', () => {
  it(
    'a second copy of the proxy exits 3 with one line naming server.port, no stack',
    async () => {
      const node = await sim();
      const port = await freePort();
      const file = configFile('first-copy.yaml', cliConfig(port, node));
      await startCli(file, port);
      const second = await startRefused('second-copy.yaml', cliConfig(port, node));
      expect(second.code).toBe(3);
      expect(second.lines).toEqual([
        `ledger-proxy: server.port: cannot listen on 127.0.0.1:${port}: it is already in use (another copy of the proxy, or another program, listens there)`,
      ]);
    },
    START_BOUND_MS + 15_000,
  );

  type Text = (taken: number, node: { url: string }, port: number) => string;
  it.each<[string, string, Text]>([
    [
      'admin.port',
      'admin.port',
      (taken, node, port) => cliConfig(port, node, { admin: { host: '127.0.0.1', port: taken } }),
    ],
    ['sim.port', 'sim.port', (taken, _node, port) => cliConfig(port, { url: 'sim' }, { sim: { port: taken } })],
    [
      'server.port (server.workers: 2)',
      'server.port',
      (taken, node) => cliConfig(taken, node, { server: { workers: 2 } }),
    ],
    [
      'sim.port (server.workers: 2)',
      'sim.port',
      (taken, _node, port) => cliConfig(port, { url: 'sim' }, { server: { workers: 2 }, sim: { port: taken } }),
    ],
  ])(
    'another program on %s: exits 3 with one line naming the key, no stack; no worker is started again',
    async (label, key, text) => {
      const node = await sim();
      const taken = await portTaken();
      const refused = await startRefused(
        `taken-${label.replace(/\W+/g, '-')}.yaml`,
        text(taken, node, await freePort()),
      );
      expect(refused.code).toBe(3);
      expect(refused.lines).toEqual([
        `ledger-proxy: ${key}: cannot listen on 127.0.0.1:${taken}: it is already in use (another copy of the proxy, or another program, listens there)`,
      ]);
    },
    START_BOUND_MS + 15_000,
  );
});

describe('server.requestTimeoutMs', () => {
  it('a client trickling its headers a byte at a time gets a 400 error body and the connection closed', async () => {
    const node = await sim();
    const { url } = await proxy([node], { server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 400 } });
    const client = await openSocket(url);
    client.socket.write('GET /v1 HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const trickle = setInterval(() => {
      if (!client.socket.destroyed) client.socket.write('a');
    }, 100);
    try {
      // Node's default would keep it for a minute or more; the bound here is loose on purpose.
      await within(client.closed, 5000, 'the connection closed');
    } finally {
      clearInterval(trickle);
    }
    expect(client.received()).toMatch(/^HTTP\/1\.1 400 /);
    expect(client.received()).toContain('"error_code":"web_framework_error"');
  });
});

describe('shutdown', () => {
  it('fails readiness, finishes the request in flight with Connection: close, closes idle and half-sent connections by the deadline', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['gas_price'] });
    const { app, url } = await proxy([node], {
      server: { host: '127.0.0.1', port: 0, shutdownTimeoutMs: 1500 },
      admin: { host: '127.0.0.1', port: await freePort() },
    });
    const adminUrl = app.adminUrl()!;
    expect((await request(`${adminUrl}/readyz`)).statusCode).toBe(200);

    // An idle keep-alive connection: it has had one reply and stays open.
    const idle = await openSocket(url);
    idle.socket.write('GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await within(new Promise((r) => idle.socket.once('data', r)), 2000, 'the reply on the idle connection');
    // A half-sent request: headers never finish.
    const half = await openSocket(url);
    half.socket.write('GET /v1 HTTP/1.1\r\nHost: x\r\n');
    // A request in flight (the node takes 400 ms).
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    agents.push(agent);
    const inFlight = request(`${url}/v1/estimate_gas_price`, { dispatcher: agent });
    await until(() => node.counters.byRoute.gas_price > 0, 2000, 'the request in flight at the node');

    const closing = app.close();
    const ready = await request(`${adminUrl}/readyz`);
    expect(ready.statusCode).toBe(503);
    await ready.body.dump();
    // New connections are refused.
    await expect(request(`${url}/v1`, { dispatcher: new Agent() })).rejects.toThrow();
    // The idle connection goes at once, long before the deadline.
    await within(idle.closed, 1000, 'the idle connection closed');

    const reply = await inFlight;
    expect(reply.statusCode).toBe(200);
    expect(reply.headers.connection).toBe('close');
    await reply.body.dump();

    // The half-sent request cannot hold the process past the deadline.
    await within(closing, 4000, 'the shutdown to end');
    await within(half.closed, 1000, 'the half-sent connection closed');
  });

  it('closes a lane connection busy with a cached read when the drain starts once its reply is written, long before the deadline', async () => {
    const node = await sim();
    node.faults.set({ mode: 'slow', delayMs: 400, routes: ['raw_item'] });
    const { app, url } = await proxy([node], { server: { host: '127.0.0.1', port: 0, shutdownTimeoutMs: 10_000 } });
    // A half-sent request keeps the shutdown going until the deadline.
    const half = await openSocket(url);
    half.socket.write('GET /v1 HTTP/1.1\r\nHost: x\r\n');
    const busy = await openSocket(url);
    busy.socket.write(
      httpRequest(
        `POST /v1/tables/${HANDLE}/raw_item?ledger_version=990 HTTP/1.1`,
        ['Host: proxy.test', 'content-type: application/json', 'accept: application/x-bcs'],
        '{"key":"0x0000000000000007"}',
      ),
    );
    await until(() => node.counters.byRoute.raw_item > 0, 2000, 'the read in flight at the node');
    const closing = app.close();
    // Kept alive, it would stay open until the deadline (10 s) closed it.
    await within(busy.closed, 3000, 'the busy connection closed after its reply');
    expect(busy.received()).toMatch(/^HTTP\/1\.1 (200|404) /);
    half.socket.destroy();
    await closing;
  });
});
