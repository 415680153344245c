// The socket limit: a plain net.Server that frames each request (its head up to the
// blank line, then Content-Length bytes of body) and writes one prepared buffer, the
// whole reply of a captured proxy hit (status line, the same header list, Date,
// Content-Length, keep-alive, body), with one write. No HTTP parser, routing, lookup,
// logging or metrics: what answering these bytes on a socket costs Node at the least.
// BENCH_PARAMS: { status, headers: [[name, value], …], bodyBase64 }.
import net from 'node:net';
import { STATUS_CODES } from 'node:http';
import { childParams, cpuMicros, serveRpc } from '../lib/child.mjs';

const { status, headers, bodyBase64 } = childParams();
const body = Buffer.from(bodyBase64, 'base64');
const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/** The whole reply, its Date made again once a second as a server's is. */
let reply;
let replySecond = -1;
function prepared() {
  const second = Math.floor(Date.now() / 1000);
  if (second !== replySecond) {
    replySecond = second;
    const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`];
    for (const [k, v] of headers) lines.push(`${k}: ${v}`);
    lines.push(`date: ${new Date(second * 1000).toUTCString()}`, `content-length: ${body.length}`);
    lines.push('connection: keep-alive', 'keep-alive: timeout=60');
    reply = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
  }
  return reply;
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let answered = 0;
    for (;;) {
      const end = pending.indexOf(HEAD_END);
      if (end < 0) break;
      const length = Number(CONTENT_LENGTH.exec(pending.latin1Slice(0, end))?.[1] ?? 0);
      const size = end + HEAD_END.length + length;
      if (pending.length < size) break;
      pending = pending.subarray(size);
      answered++;
    }
    if (answered === 1) socket.write(prepared());
    else if (answered > 1) socket.write(Buffer.concat(Array.from({ length: answered }, prepared)));
  });
  socket.on('error', () => socket.destroy());
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

serveRpc(
  { cpu: cpuMicros, shutdown: () => new Promise((resolve) => server.close(resolve)) },
  { url, pid: process.pid },
);
