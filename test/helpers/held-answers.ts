// A hop in front of a node that passes each request on at once and, when told
// to, holds the node's answer before passing it back: the node answered as its
// ledger stood when the call reached it, and the answer is still on its way (a
// node call in flight while the node moves on). The sim's 'slow' fault cannot
// show this: it reads its ledger only once the delay is over.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface HeldAnswers {
  /** the node url to configure */
  url: string;
  /** holds the answers to the next `count` requests whose path contains `match` */
  hold(match: string, count?: number): void;
  /** how many answers are held now (each one the node has already given) */
  held(): number;
  /** passes every held answer on */
  release(): void;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

export async function heldAnswers(nodeUrl: string): Promise<HeldAnswers> {
  const node = new URL(nodeUrl);
  let holding: { match: string; remaining: number } | null = null;
  let waiting: Array<() => void> = [];
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const hold = holding !== null && url.includes(holding.match);
    if (hold && --holding!.remaining <= 0) holding = null;
    const upstream = request(
      {
        host: node.hostname,
        port: node.port,
        method: req.method,
        path: url,
        headers: { ...req.headers, host: node.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          const pass = (): void => void res.writeHead(answer.statusCode ?? 502, headers).end(body);
          if (hold) waiting.push(pass);
          else pass();
        });
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
  return {
    url: `http://127.0.0.1:${port}`,
    hold: (match, count = 1) => {
      holding = { match, remaining: count };
    },
    held: () => waiting.length,
    release: () => {
      const passing = waiting;
      waiting = [];
      for (const pass of passing) pass();
    },
  };
}
