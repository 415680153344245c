// The config contract (docs/design.md): one schema that is at once the types, the
// defaults and the validation, so the three cannot drift apart. Every object is
// strict because a misspelt key that is silently ignored leaves a default in force
// that the operator thinks they changed.
// Each section lives in sections/; this file composes them and checks what
// spans sections.

import { z } from 'zod';
import { VENDOR_PATTERN } from '../wire/vendor.js';
import { SIM_URL } from './net.js';
import { CacheSchema, LatestSchema } from './sections/cache.js';
import { chainId, host, nonNegativeInt, port, positiveInt } from './sections/common.js';
import { CorsSchema } from './sections/edge.js';
import { SheddingSchema } from './sections/limits.js';
import { AdminSchema, ServerSchema } from './sections/server.js';
import { TenantsSchema } from './sections/tenants.js';
import { TracingSchema } from './sections/tracing.js';
import { RoutingSchema, UpstreamsSchema } from './sections/upstreams.js';

type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** json: one JSON object a line; pretty: one readable line a request; auto: pretty when stdout is a terminal. */
const LOG_FORMATS = ['json', 'pretty', 'auto'] as const;

const share = z.number().min(0).max(1);

const SimWritesSchema = z
  .strictObject({
    model: z
      .enum(['period', 'sparse'])
      .default('period')
      .describe(
        '`period`: every value changes every 10 versions, and the BCS transaction feed is refused (403 `api_disabled`); `sparse`: a finite universe of keys written now and then, which the BCS feed `GET /v1/transactions` lists exactly.',
      ),
    writeRate: share.default(0.02).describe('`sparse`: the mean share of the universe written per version.'),
    hotShare: share.default(0.05).describe('`sparse`: the share of keys that are hot (written often).'),
    hotEvery: z.number().min(1).default(8).describe('`sparse`: a hot key is written about once in this many versions.'),
    accounts: nonNegativeInt.max(100_000).default(36).describe('`sparse`: user accounts in the universe.'),
    objects: nonNegativeInt.max(100_000).default(12).describe('`sparse`: objects holding a resource group.'),
    tables: nonNegativeInt.max(1000).default(4).describe('`sparse`: table handles.'),
    tableKeys: nonNegativeInt.max(100_000).default(32).describe('`sparse`: u64 keys per table.'),
  })
  .describe('How its state changes from one version to the next.');

const SimSchema = z
  .strictObject({
    port: port.default(8081).describe('Where the built-in simulated node listens (an upstream `url: sim`).'),
    host: host.default('127.0.0.1').describe('The address the built-in simulated node listens on.'),
    versionsPerSecond: z.number().positive().default(2).describe('How fast its ledger advances.'),
    // A number, not a bigint, so the Config stays JSON-printable; callers widen it.
    pruneWindow: positiveInt.default(1_000_000).describe('The versions it keeps.'),
    chainId: chainId.default(4).describe('Its chain id.'),
    writes: SimWritesSchema.prefault({}),
  })
  .describe('The built-in simulated node, run when an upstream is `sim`.');

export const ConfigSchema = z
  .strictObject({
    server: ServerSchema.prefault({}),
    admin: AdminSchema.prefault({}),
    vendor: z
      .string()
      .regex(VENDOR_PATTERN)
      .default('auto')
      .describe(
        'The header prefix `X-{VENDOR}-` and the BCS media type `application/x.{vendor}.view_function+bcs`. `auto`: read from the prefix of the ledger headers the nodes answer their probes with (a strict majority of the nodes that answered); a named vendor the nodes contradict means not ready, naming both. The built-in sim speaks `node` under `auto`.',
      ),
    chainId: chainId
      .optional()
      .describe('The expected chain id. Unset: the majority of the nodes decides, and any chain is accepted.'),
    upstreams: UpstreamsSchema.prefault([{ url: SIM_URL }]),
    routing: RoutingSchema.prefault({}),
    cache: CacheSchema.prefault({}),
    passthrough: z
      .boolean()
      .default(true)
      .describe('Forward the `/v1` routes the proxy does not cache to a node; `false`: a 404 error body.'),
    cors: CorsSchema,
    latest: LatestSchema.prefault({}),
    tenants: TenantsSchema.optional(),
    shedding: SheddingSchema,
    log: z
      .strictObject({
        level: z
          .enum(LOG_LEVELS)
          .default('info')
          .describe(
            'One line per request at `info`; cache hits (memory and Redis) only at `debug`. Changes on SIGHUP.',
          ),
        format: z
          .enum(LOG_FORMATS)
          .default('auto')
          .describe(
            '`json`: one JSON object a line; `pretty`: one readable line a request; `auto`: pretty when stdout is a terminal.',
          ),
      })
      .prefault({})
      .describe('Logging.'),
    tracing: TracingSchema,
    sim: SimSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
    const usesSim = config.upstreams.some((upstream) => upstream.url === SIM_URL);
    // The built-in node would report another chain and be quarantined at once.
    if (usesSim && config.chainId !== undefined && config.chainId !== config.sim.chainId) {
      const message = `differs from sim.chainId (${config.sim.chainId}) while an upstream is 'sim'`;
      ctx.addIssue({ code: 'custom', path: ['chainId'], message });
    }
    // The tenant header is taken only from peers the operator names: a hop count or
    // true says how many hops to believe, not who they are, so with either any
    // client that connects directly could name a tenant.
    const trustProxy = config.server.trustProxy;
    if (config.tenants?.trustedHeader !== undefined && (trustProxy === true || typeof trustProxy === 'number')) {
      const given = trustProxy === true ? 'true' : `a hop count (${trustProxy})`;
      const message = `needs server.trustProxy to list the addresses of the layer in front (such as 10.0.0.0/8 or loopback), not ${given}: any client that connects directly could name a tenant`;
      ctx.addIssue({ code: 'custom', path: ['tenants', 'trustedHeader'], message });
    }
    // Two listeners on one address would fail at start with a bare EADDRINUSE.
    const listeners = [
      { key: 'server', ...config.server },
      ...(config.admin.port !== 0 ? [{ key: 'admin', ...config.admin }] : []),
      ...(usesSim ? [{ key: 'sim', ...config.sim }] : []),
    ];
    listeners.forEach((listener, index) => {
      const clash = listeners
        .slice(0, index)
        .find((other) => other.port === listener.port && other.host === listener.host);
      if (clash !== undefined && listener.port !== 0) {
        ctx.addIssue({ code: 'custom', path: [listener.key, 'port'], message: `same host and port as ${clash.key}` });
      }
    });
  });

export type Config = DeepReadonly<z.output<typeof ConfigSchema>>;
export type RedisConfig = NonNullable<Config['cache']['redis']>;
export type LogLevel = Config['log']['level'];
export type LogFormat = Config['log']['format'];
