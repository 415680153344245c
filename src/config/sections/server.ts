// server and admin: the listeners.
import { z } from 'zod';
import { isTrustProxy } from '../net.js';
import { host, hostName, MIB, nonNegativeInt, port, positiveInt } from './common.js';
import { KeySchema } from './tenants.js';

const MAX_WORKERS = 256;

const isWorkers = (value: unknown): boolean =>
  value === 'auto' || (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_WORKERS);

/** One message for every way server.workers can be wrong, saying what is allowed. */
const workersMessage = (issue: { input?: unknown }): string =>
  `must be "auto" or a whole number from 1 to ${MAX_WORKERS}, got ${JSON.stringify(issue.input)}`;

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
  // SIGTERM: /readyz fails at once, and new connections are still accepted for
  // this long, so a load balancer that probes /readyz stops sending before the
  // listener closes; then the drain of shutdownTimeoutMs starts.
  drainDelayMs: nonNegativeInt.max(600_000).default(0),
  // Processes sharing the port (node:cluster), each with its own memory tier and
  // the shared Redis tier; "auto" = one per CPU.
  // The lane: the public listener reads the requests of cached routes off the
  // socket itself (a strict HTTP/1.1 parser) and answers them through the same
  // entry as node:http; anything else it hands to node:http. false: node:http
  // reads every request.
  lane: z.boolean().default(true),
  workers: z.custom<'auto' | number>(isWorkers, { error: workersMessage }).default(1),
});

export const AdminSchema = z.strictObject({
  host: host.default('127.0.0.1'),
  port: port.default(9090), // 0 = no admin server
  // The names a request's Host may give the admin listener beyond its own
  // address (and localhost, on loopback): a Prometheus or a probe that calls it
  // by a DNS name. Any other name is refused, so a page on a rebound DNS name
  // cannot read /metrics.
  allowedHosts: z.array(hostName).default([]),
  // Required as `Authorization: Bearer <token>` by POST /cache/purge; given as a
  // tenant key is, by its sha256 or the environment variable that holds it.
  token: KeySchema.optional(),
});
