// What a proxy still holds once a client is gone: open connections (the lane's
// and node:http's), the lane's connections (a hand-off still pending is one) and
// node calls in flight. A test that ends a connection in some state waits for
// all of them to fall to zero.
import type { App } from '../../src/app.js';
import { Lane } from '../../src/http/lane/lane.js';
import { until } from './until.js';

interface Held {
  /** sockets the public listener has open */
  connections: number;
  /** connections on the lane, when server.lane is on */
  lane: number;
  /** node calls in flight, over every node */
  nodeCalls: number;
}

async function held(app: App): Promise<Held> {
  const server = app.http.server;
  const connections = await new Promise<number>((resolve, reject) =>
    server.getConnections((err, count) => (err ? reject(err) : resolve(count))),
  );
  const lane = Lane.of(server)?.size ?? 0;
  const nodeCalls = app.pool.nodes.reduce((sum, node) => sum + node.inFlight, 0);
  return { connections, lane, nodeCalls };
}

/** Waits until the proxy holds no connection and no node call. */
export async function untilNothingHeld(app: App, what: string, timeoutMs = 3000): Promise<void> {
  let last: Held | undefined;
  await until(
    async () => {
      last = await held(app);
      return last.connections === 0 && last.lane === 0 && last.nodeCalls === 0;
    },
    timeoutMs,
    () => `${what}: the proxy to hold nothing (it holds ${JSON.stringify(last)})`,
  );
}
