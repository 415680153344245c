// The framework ceiling: fastify with one constant route that answers the bytes
// and headers the proxy answers on a memory hit, and reads the request body raw,
// as the proxy does. Nothing else: no parsing, key, cache lookup, hooks or metrics.
// BENCH_PARAMS: { path, status, headers, bodyBase64 }.
import Fastify from 'fastify';
import { childParams, serveRpc } from '../lib/child.mjs';

const { path, status, headers, bodyBase64 } = childParams();
const body = Buffer.from(bodyBase64, 'base64');
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, raw, done) => done(null, raw));
app.post(path, (_request, reply) => {
  reply.code(status).headers(headers);
  return reply.send(body);
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });

serveRpc({ shutdown: () => app.close() }, { url, pid: process.pid });
