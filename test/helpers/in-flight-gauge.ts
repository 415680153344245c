// A pass-through HTTP hop in front of a node that records how many requests were
// in flight at once: "counted at the node" for budget tests.
import { createServer, request, type Server } from 'node:http';
import { afterEach } from 'vitest';

export interface InFlightGauge {
  url: string;
  max: number;
  current: number;
  close(): Promise<void>;
}

const open: Server[] = [];
afterEach(async () => {
  while (open.length > 0) {
    const server = open.pop()!;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

export async function inFlightGauge(target: string): Promise<InFlightGauge> {
  const to = new URL(target);
  const gauge = { url: '', max: 0, current: 0, close: async () => {} };
  const server = createServer((req, res) => {
    gauge.current++;
    gauge.max = Math.max(gauge.max, gauge.current);
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => gauge.current--);
      },
    );
    upstream.on('error', () => {
      gauge.current--;
      res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(server);
  gauge.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return gauge;
}
