// A proxy (built in `root`: a checkout with dist/ and node_modules/) and a sim in this
// process, the route's keys primed over HTTP, and one lane connection over a fake
// socket (a Duplex that takes the replies): `send(bytes)` feeds it one raw request,
// answered synchronously on a memory hit. For measuring the proxy's own work on a hit
// without sockets or a load generator (inproc-hit.mjs, walk.mjs).
import { Duplex, Writable } from 'node:stream';
import { HIT_ROUTES, routeItems } from './routes.mjs';

const VERSION = 100000n;

/** One route's `keys` requests as raw HTTP/1.1 bytes, each answered from memory once this resolves. */
export async function startInProcess(root, routeId, keys) {
  const pino = (await import(`${root}/node_modules/pino/pino.js`)).default;
  const { startSim } = await import(`${root}/dist/sim/index.js`);
  const { buildApp } = await import(`${root}/dist/app.js`);
  const { parseConfig } = await import(`${root}/dist/config/index.js`);
  const sim = await startSim({ port: 0, versionsPerSecond: 0, startVersion: VERSION });
  const logs = new Writable({ write: (_c, _e, done) => done() });
  const config = {
    server: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    upstreams: [{ url: sim.url, name: 'sim' }],
  };
  const app = await buildApp(parseConfig(config), { logger: pino({ level: 'info' }, logs) });
  const url = await app.listen();
  const route = HIT_ROUTES.find((r) => r.id === routeId);
  if (route === undefined) throw new Error(`no hit route ${routeId}`);
  const requests = routeItems(route, keys, VERSION).map((item) => {
    const r = route.request(item, VERSION);
    const method = r.method ?? (r.body ? 'POST' : 'GET');
    const headers = { host: 'bench', ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) };
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    const head = Buffer.from(`${method} ${r.path} HTTP/1.1\r\n${lines.join('')}\r\n`, 'latin1');
    return { ...r, method, bytes: r.body ? Buffer.concat([head, r.body]) : head };
  });
  // A miss, then a hit: each key's answer is in the memory tier and its spelling kept.
  for (let pass = 0; pass < 2; pass++)
    for (const r of requests)
      await (await fetch(url + r.path, { method: r.method, headers: r.headers, body: r.body })).arrayBuffer();
  const taken = { replies: 0, last: undefined };
  class FakeSocket extends Duplex {
    remoteAddress = '127.0.0.1';
    _read() {}
    _write(chunk, _e, done) {
      taken.replies++;
      taken.last = chunk;
      done();
    }
    setNoDelay() {
      return this;
    }
    setTimeout() {
      return this;
    }
    destroySoon() {
      this.destroy();
    }
  }
  const socket = new FakeSocket();
  app.http.server.emit('connection', socket);
  return {
    requests,
    send: (bytes) => socket.emit('data', bytes),
    /** How many replies the socket has taken, and the last one. */
    taken,
    /** Throws unless the last reply is a memory hit and `count` replies were taken. */
    expectHits(count) {
      if (taken.replies !== count || !taken.last?.toString('latin1').includes('x-cache: HIT'))
        throw new Error(
          `not memory hits on the lane: ${taken.replies} replies, the last ${taken.last?.toString('latin1').slice(0, 300)}`,
        );
    },
    async close() {
      await app.close();
      await sim.close();
    },
  };
}
