// One-off HTTP calls from the orchestrator (checks, priming), not load.
import { request } from 'undici';

export async function call(base, { path, headers, body, method = 'POST' }) {
  const res = await request(base + path, { method, headers, body });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const out = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode, headers: out, body: bytes };
}

/** Headers a server sets per connection or per reply, left out when comparing replies. */
const VOLATILE_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** A reply's headers in wire order, without those a server sets per connection or reply (Date, Connection, lengths). */
export function replyHeaderList(headers) {
  return Object.entries(headers).filter(([k]) => !VOLATILE_HEADERS.has(k));
}

/**
 * A reply (call()'s) as the servers that answer every request with one captured
 * reply take it: proc/ceiling.mjs, proc/keyed-ceiling.mjs and proc/socket-limit.mjs.
 */
export function cannedReply(reply) {
  return { status: reply.status, headers: replyHeaderList(reply.headers), bodyBase64: reply.body.toString('base64') };
}
