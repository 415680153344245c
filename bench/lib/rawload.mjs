// A minimal HTTP/1.1 load generator for many distinct requests: every distinct
// request is serialised once into its wire bytes, and each keep-alive connection
// writes one request, reads one Content-Length reply, and writes the next (no
// pipelining). Per reply it finds the header end and Content-Length in the bytes,
// and reads the status code: far less work than autocannon's per-request
// setupRequest or an undici client, so the load generator stays the cheaper side
// with 10,000 distinct keys.
import net from 'node:net';
import { prng } from './prng.mjs';
import { zipf } from './workloads.mjs';

const CRLF2 = Buffer.from('\r\n\r\n');
const CL_LOWER = Buffer.from('\r\ncontent-length:');
const CL_TITLE = Buffer.from('\r\nContent-Length:');

/** The wire bytes of one request ({ path, headers, body: Buffer }, method POST unless given) to `host`. */
export function wireRequest(host, { method = 'POST', path, headers, body }) {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [k, v] of Object.entries(headers ?? {})) head += `${k}: ${v}\r\n`;
  head += `content-length: ${body ? body.length : 0}\r\n\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

/**
 * The order requests are sent in: 'zipf' (ranks drawn from Zipf(s) over n with a
 * seeded PRNG, `length` long), or 'cycle' (0..n-1 in order). Connection c starts at
 * c/connections of the way through, so connections do not send in lockstep.
 */
export function sequence({ order, n, s = 1, seed = 1, length = 1 << 17 }) {
  if (order === 'cycle') return Int32Array.from({ length: n }, (_, i) => i);
  const rank = zipf(n, s, prng(seed));
  return Int32Array.from({ length }, () => rank());
}

function headerValue(head, name) {
  const at = head.indexOf(`\r\n${name}:`);
  if (at < 0) return '(none)';
  const end = head.indexOf('\r\n', at + 2);
  // the head ends before its blank line: the last field has no CRLF after it here
  return head.slice(at + name.length + 3, end < 0 ? head.length : end).trim();
}

/**
 * Runs `connections` connections to `url` for `durationS` seconds (or, with
 * `once`, until each connection has sent its share of `requests` once; with
 * `eachConnection`, every connection sends all of them; with `count`, until the
 * connections have sent `count` requests together, `seq` read from `offset` on). Returns completed
 * replies, req/s, status counts and, when `countHeaders` is given, the counts of
 * those headers' values joined by '/'.
 */
export function blast({
  url,
  requests,
  seq,
  connections,
  durationS,
  once = false,
  eachConnection = false,
  countHeaders = [],
  count,
  offset = 0,
}) {
  const counted = count !== undefined;
  if (counted) once = true;
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const deadline = started + (durationS ?? 0) * 1000;
    let completed = 0;
    let errors = 0;
    let open = connections;
    let nextShared = 0;
    const statuses = {};
    const headerCounts = {};
    const sockets = [];
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      const seconds = (Math.min(performance.now(), once ? Infinity : deadline) - started) / 1000;
      for (const s of sockets) s.destroy();
      resolve({
        completed,
        durationS: seconds,
        rps: completed / seconds,
        statuses,
        errors,
        reconnects,
        ...(countHeaders.length ? { headerCounts } : {}),
      });
    };
    const timer = once ? null : setTimeout(finish, durationS * 1000 + 5);
    let reconnects = 0;
    for (let c = 0; c < connections; c++) {
      let pos = once && !eachConnection ? -1 : Math.floor((c * seq.length) / connections);
      let sentOwn = 0;
      let ended = false;
      const next = (socket) => {
        if (finished) return;
        let index;
        if (counted) {
          if (nextShared >= count) return done(socket);
          index = seq[(offset + nextShared++) % seq.length];
        } else if (once && !eachConnection) {
          if (nextShared >= seq.length) return done(socket);
          index = seq[nextShared++];
        } else if (once) {
          if (sentOwn >= seq.length) return done(socket);
          index = seq[(pos + sentOwn) % seq.length];
        } else {
          if (performance.now() >= deadline) return done(socket);
          index = seq[pos];
          pos = pos + 1 === seq.length ? 0 : pos + 1;
        }
        sentOwn++;
        socket.write(requests[index]);
      };
      const done = (socket) => {
        ended = true;
        socket.end();
        if (--open === 0) {
          if (timer) clearTimeout(timer);
          finish();
        }
      };
      // A connection the server closes (keep-alive limits) is opened again; its request in flight is lost.
      const connect = () => {
        let pending = null;
        const socket = net.connect({ host: hostname, port: Number(port) });
        sockets.push(socket);
        socket.setNoDelay(true);
        socket.on('connect', () => next(socket));
        socket.on('close', () => {
          if (finished || ended) return;
          // a server that keeps closing (or is gone) ends the run rather than spinning
          if (++reconnects > 100 * connections) return finish();
          connect();
        });
        socket.on('error', (err) => {
          errors++;
          if (!finished && completed === 0 && errors >= connections) {
            if (timer) clearTimeout(timer);
            finished = true;
            for (const s of sockets) s.destroy();
            reject(err);
          }
        });
        socket.on('data', (chunk) => {
          pending = pending === null ? chunk : Buffer.concat([pending, chunk]);
          for (;;) {
            const headEnd = pending.indexOf(CRLF2);
            if (headEnd < 0) return;
            let cl = pending.indexOf(CL_LOWER);
            if (cl < 0 || cl > headEnd) cl = pending.indexOf(CL_TITLE);
            if (cl < 0 || cl > headEnd) {
              socket.destroy(new Error('reply without Content-Length'));
              return;
            }
            let length = 0;
            for (let i = cl + CL_LOWER.length; i < headEnd; i++) {
              const d = pending[i];
              if (d >= 48 && d <= 57) length = length * 10 + d - 48;
              else if (d === 13) break;
            }
            const total = headEnd + 4 + length;
            if (pending.length < total) return;
            const status = pending[9] * 100 + pending[10] * 10 + pending[11] - 48 * 111;
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (countHeaders.length) {
              const head = pending.latin1Slice(0, headEnd).toLowerCase();
              const value = countHeaders.map((h) => headerValue(head, h)).join('/');
              headerCounts[value] = (headerCounts[value] ?? 0) + 1;
            }
            if (once || performance.now() <= deadline) completed++;
            pending = pending.length === total ? null : pending.subarray(total);
            next(socket);
            if (pending === null) return;
          }
        });
      };
      connect();
    }
  });
}
