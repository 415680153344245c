// The keyed ceiling: the ceiling (proc/ceiling.mjs) plus the one thing no cache can
// skip: finding the answer by the request's bytes. It answers the same captured
// reply, but only after looking up the request's method, url, content type,
// accept and body in a Map of the route's distinct requests (the Zipf keys of
// scenario 1), each mapped to its own copy of the reply's body and header list.
// A request it does not hold gets a 404. What a cache on node:http costs at the
// least: the ratio of it to the ceiling bounds what any proxy can reach.
// BENCH_PARAMS: { status, headers: [[name, value], …], bodyBase64, route, keys, version }: the
// route's first `keys` items at `version`, as lib/routes.mjs routeItems picks them.
import http from 'node:http';
import { childParams, serveRpc } from '../lib/child.mjs';
import { hitRoute, routeItems } from '../lib/routes.mjs';

const { status, headers, bodyBase64, route, keys, version } = childParams();
const hit = hitRoute(route);
const items = routeItems(hit, keys, BigInt(version));
const body = Buffer.from(bodyBase64, 'base64');
const flat = [];
for (const [k, v] of headers) flat.push(k, v);
flat.push('content-length', String(body.length));

const spelling = (method, url, contentType, accept, reqBody) =>
  `${method} ${url}\n${contentType ?? ''}\n${accept ?? ''}\n${reqBody.toString('latin1')}`;
const replies = new Map();
for (const item of items) {
  const r = hit.request(item, BigInt(version));
  const lower = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const reqBody = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body);
  replies.set(spelling(r.method ?? 'POST', r.path, lower['content-type'], lower.accept, reqBody), {
    headers: [...flat],
    body: Buffer.from(body),
  });
}

const answer = (req, res, reqBody) => {
  const found = replies.get(spelling(req.method, req.url, req.headers['content-type'], req.headers.accept, reqBody));
  if (found === undefined) {
    res.writeHead(404, ['content-length', '0']);
    return res.end();
  }
  res.writeHead(status, found.headers);
  res.end(found.body);
};
const EMPTY = Buffer.alloc(0);
const server = http.createServer((req, res) => {
  let got = EMPTY;
  req.on('data', (chunk) => (got = got.length === 0 ? chunk : Buffer.concat([got, chunk])));
  req.on('end', () => answer(req, res, got));
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

serveRpc({ shutdown: () => new Promise((resolve) => server.close(resolve)) }, { url, pid: process.pid });
