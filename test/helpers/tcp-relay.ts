// A TCP relay on a free port in front of a server (a redis-server), which a test
// cuts and restores: one client loses its connection while others keep theirs.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterEach } from 'vitest';

export interface TcpRelay {
  port: number;
  /** Drops every relayed connection and refuses new ones (connection refused), until restore(). */
  cut(): Promise<void>;
  /** Accepts and relays again, on the same port. */
  restore(): Promise<void>;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

export async function tcpRelay(targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        resolve((s.address() as { port: number }).port);
      });
    });
  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s !== undefined) await new Promise((resolve) => s.close(resolve));
  };
  const port = await listen(0);
  closers.push(stop);
  return {
    port,
    cut: stop,
    restore: async () => {
      await listen(port);
    },
  };
}
