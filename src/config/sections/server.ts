// server and admin: the listeners.
import { z } from 'zod';
import { isTrustProxy } from '../net.js';
import { host, MIB, nonNegativeInt, port, positiveInt } from './common.js';

export const ServerSchema = z.strictObject({
  host: host.default('127.0.0.1'),
  port: port.default(8080),
  // Nodes cap request bodies at 8 MiB; above 64 MiB a single request could exhaust memory.
  bodyLimitBytes: z
    .int()
    .min(1)
    .max(64 * MIB)
    .default(8 * MIB),
  trustProxy: z
    .custom<boolean | number | string>(isTrustProxy, {
      error: 'must be true, false, a hop count, or a comma-separated list of IP addresses / CIDR ranges',
    })
    .default(false),
  // Keep a client's X-Request-Id when it is 1 to 128 of [A-Za-z0-9._:-]; false: the proxy always makes its own.
  trustRequestId: z.boolean().default(true),
  // The whole request, headers included, must arrive within this: a client sending
  // a byte a second cannot hold a connection. 0 turns the limit off.
  requestTimeoutMs: nonNegativeInt.default(30_000),
  // SIGTERM: how long requests in flight may take to finish before every
  // connection is closed and the process exits.
  shutdownTimeoutMs: positiveInt.default(10_000),
  // Processes sharing the port (node:cluster), each with its own memory tier and
  // the shared Redis tier; "auto" = one per CPU.
  workers: z.union([z.literal('auto'), positiveInt.max(256)]).default(1),
});

export const AdminSchema = z.strictObject({
  host: host.default('127.0.0.1'),
  port: port.default(9090), // 0 = no admin server
});
