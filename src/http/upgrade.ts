// Requests that ask for a protocol upgrade ("Connection: upgrade" + "Upgrade: …")
// are served as the plain HTTP requests they also are, as a real node (hyper)
// serves them: this API speaks HTTP/1.1 only.
//
// Node needs help for that. With no 'upgrade' listener it does serve them as plain
// requests, but its parser then swallows every error in their body: a bad chunk or
// a body cut short gets no reply at all, only a closed (or hanging) connection.
// So every upgrade is taken here, its head is rebuilt without the upgrade, and the
// socket is handed back to the HTTP server, which parses the request afresh with
// all its usual checks. (Emitting 'connection' to inject a socket is documented.)
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

export function serveUpgradesAsPlainHttp(server: Server): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, bodyHead: Buffer) => {
    socket.unshift(Buffer.concat([headWithoutUpgrade(req), bodyHead]));
    server.emit('connection', socket);
  });
}

/** The request head as received (names, order and duplicates kept), less the upgrade. */
function headWithoutUpgrade(req: IncomingMessage): Buffer {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade') continue;
    let value = raw[i + 1]!;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && token.toLowerCase() !== 'upgrade')
        .join(', ');
      if (value === '') continue;
    }
    lines.push(`${name}: ${value}`);
  }
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
}
