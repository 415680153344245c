// The forwarding floor: a bare node:http server that sends each request on to the
// node with undici (the client the proxy uses, with its pool settings) and writes
// the node's status, headers and body back. No routing, parsing, key, cache,
// breaker, log or metrics: what any Node proxy adds to a forwarded read at the
// least, measured beside the proxy in scenario 3.
// BENCH_PARAMS: { target }: the node's base url.
import http from 'node:http';
import { Pool } from 'undici';
import { childParams, cpuMicros, serveRpc } from '../lib/child.mjs';

const { target } = childParams();
const pool = new Pool(target, { connections: 64, keepAliveTimeout: 30_000, pipelining: 1 });
// Hop-by-hop headers are not forwarded (RFC 9110 §7.6.1); Node sets its own.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

const forward = async (req, res, body) => {
  try {
    const answer = await pool.request({
      method: req.method,
      path: req.url,
      headers: {
        'content-type': req.headers['content-type'] ?? 'application/json',
        accept: req.headers.accept ?? '*/*',
        'accept-encoding': 'identity',
      },
      body: body.length > 0 ? body : undefined,
    });
    const got = Buffer.from(await answer.body.arrayBuffer());
    const headers = [];
    for (const [name, value] of Object.entries(answer.headers))
      if (!HOP.has(name)) for (const v of [value].flat()) headers.push(name, v);
    res.writeHead(answer.statusCode, headers);
    res.end(got);
  } catch (err) {
    res.writeHead(503, ['content-type', 'text/plain']);
    res.end(String(err));
  }
};

const EMPTY = Buffer.alloc(0);
const server = http.createServer((req, res) => {
  let got = EMPTY;
  req.on('data', (chunk) => (got = got.length === 0 ? chunk : Buffer.concat([got, chunk])));
  req.on('end', () => void forward(req, res, got));
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

serveRpc(
  { cpu: cpuMicros, shutdown: () => Promise.all([new Promise((resolve) => server.close(resolve)), pool.close()]) },
  { url, pid: process.pid },
);
