// The public listener's lifecycle (issue 15 §1): a slow client cannot hold a
// connection past server.requestTimeoutMs, and a shutdown fails readiness first,
// lets requests in flight finish with `Connection: close`, closes idle keep-alive
// sockets, and ends by server.shutdownTimeoutMs whatever the clients do.
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { proxy, sim } from '../helpers/proxy.js';
import { openSocket } from '../helpers/raw-socket.js';
import { until, within } from '../helpers/until.js';

const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.destroy();
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
});
