// The ceiling: a bare node:http server that reads each request's body and answers
// one captured proxy hit reply: the same status, the same header list (the
// content type, the seven ledger headers, X-Cache, X-Cache-Tier …, in the proxy's
// order) and the same body bytes. Node adds Date and Connection as it does for the
// proxy. No routing, parsing, key, lookup, logging or metrics: what any Node server
// pays to answer these bytes.
// BENCH_PARAMS: { status, headers: [[name, value], …], bodyBase64 }.
import http from 'node:http';
import { childParams, cpuMicros, serveRpc } from '../lib/child.mjs';

const { status, headers, bodyBase64 } = childParams();
const body = Buffer.from(bodyBase64, 'base64');
const flat = [];
for (const [k, v] of headers) flat.push(k, v);
flat.push('content-length', String(body.length));

const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(status, flat);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

serveRpc(
  { cpu: cpuMicros, shutdown: () => new Promise((resolve) => server.close(resolve)) },
  { url, pid: process.pid },
);
