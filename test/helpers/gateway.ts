// A hosted node's gateway in front of a sim: it serves the node's API only under a
// path prefix (https://host/<prefix>/v1/…) and only with an API key header, as
// commercial node providers do. Everything else gets 404 HTML / 401, which the
// proxy must never pass off as a node's answer. It records every request it saw.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

interface GatewaySeen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface Gateway {
  /** the node url to configure: http://127.0.0.1:port/<prefix> */
  url: string;
  seen: GatewaySeen[];
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

export async function gateway(
  nodeUrl: string,
  prefix: string,
  apiKey: { name: string; value: string },
): Promise<Gateway> {
  const node = new URL(nodeUrl);
  const seen: GatewaySeen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const url = req.url ?? '';
    if (!url.startsWith(`${prefix}/v1`)) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html>no such route</html>');
      return;
    }
    if (req.headers[apiKey.name.toLowerCase()] !== apiKey.value) {
      res.writeHead(401, { 'content-type': 'text/html' }).end('<html>missing or wrong API key</html>');
      return;
    }
    const headers = { ...req.headers, host: node.host };
    const upstream = httpRequest(
      { host: node.hostname, port: node.port, method: req.method, path: url.slice(prefix.length), headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${prefix}`, seen };
}
