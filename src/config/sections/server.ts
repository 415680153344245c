// server and admin: the listeners.
import { z } from 'zod';
import { isTrustProxy } from '../net.js';
import { byteSize, host, hostName, MIB, nonNegativeInt, port, positiveInt } from './common.js';
import { KeySchema } from './tenants.js';

const MAX_WORKERS = 256;

const isWorkers = (value: unknown): boolean =>
  value === 'auto' || (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_WORKERS);

/** One message for every way server.workers can be wrong, saying what is allowed. */
const workersMessage = (issue: { input?: unknown }): string =>
  `must be "auto" or a whole number from 1 to ${MAX_WORKERS}, got ${JSON.stringify(issue.input)}`;

export const ServerSchema = z
  .strictObject({
    host: host.default('127.0.0.1').describe("The public listener's address; `0.0.0.0` accepts other machines."),
    port: port.default(8080).describe("The public listener's port."),
    // Nodes cap request bodies at 8 MiB; above 64 MiB a single request could exhaust memory.
    bodyLimitBytes: byteSize(64 * MIB)
      .default(8 * MIB)
      .describe('The largest request body, at most 64MiB; a larger one is answered 400.'),
    trustProxy: z
      .custom<boolean | number | string>(isTrustProxy, {
        error: 'must be true, false, a hop count, or a comma-separated list of IP addresses / CIDR ranges',
      })
      .meta({ anyOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }, { type: 'string' }] })
      .default(false)
      .describe(
        'Whether to trust X-Forwarded-For from a load balancer: `true`, a hop count, or a comma-separated list of addresses and CIDR ranges (`loopback`, `10.0.0.0/8`). Only a list names trusted peers: those may set `tenants.trustedHeader` and are told `X-Proxy-Headroom`.',
      ),
    trustRequestId: z
      .boolean()
      .default(true)
      .describe(
        "Keep a client's `X-Request-Id` when it is 1 to 128 of `[A-Za-z0-9._:-]`; otherwise (or with `false`) the proxy makes one. The id is on the reply, on the node calls made for the request and on its log lines.",
      ),
    // A client sending a byte a second cannot hold a connection.
    requestTimeoutMs: nonNegativeInt
      .default(30_000)
      .describe(
        'The whole request, headers included, must arrive within this (else a 400 and the connection closes); `0`: no limit.',
      ),
    shutdownTimeoutMs: positiveInt
      .default(10_000)
      .describe(
        'On SIGTERM or SIGINT, how long requests in flight may take; then every connection is closed and the process exits.',
      ),
    // A load balancer that probes /readyz stops sending before the listener closes.
    drainDelayMs: nonNegativeInt
      .max(600_000)
      .default(0)
      .describe(
        "On SIGTERM or SIGINT, `/readyz` fails at once and new connections are still accepted for this long; then the drain of `shutdownTimeoutMs` starts. Set it to at least your load balancer's probe interval times its failure threshold.",
      ),
    workers: z
      .custom<'auto' | number>(isWorkers, { error: workersMessage })
      .meta({ anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: MAX_WORKERS }] })
      .default(1)
      .describe(
        `Processes sharing the port (node:cluster): \`auto\` (one per CPU) or a whole number up to ${MAX_WORKERS}. Each has its own memory tier; all share Redis.`,
      ),
  })
  .describe('The public listener, which wallets and SDKs talk to.');

export const AdminSchema = z
  .strictObject({
    host: host
      .default('127.0.0.1')
      .describe(
        "The admin listener's address (`/metrics`, `/healthz`, `/readyz`, `POST /cache/purge`). It refuses any request with an `Origin`, and any `Host` that does not name it.",
      ),
    port: port.default(9090).describe("The admin listener's port; `0`: no admin listener."),
    // Any other name is refused, so a page on a rebound DNS name cannot read /metrics.
    allowedHosts: z
      .array(hostName)
      .default([])
      .describe(
        "Host names (or addresses) a request's `Host` may give the admin listener besides its own address (and `localhost`, on loopback): the names a scraper or a probe calls it by. Any other `Host` is refused 403.",
      ),
    token: KeySchema.optional().describe(
      '`{sha256: <hex of the token>}` or `{env: VARIABLE}`, as a tenant key is given: `POST /cache/purge` then needs `Authorization: Bearer <token>` (else 401). Unset on a non-loopback `admin.host`: a warning at start.',
    ),
  })
  .describe('The admin listener: metrics, health, readiness and purges.');
