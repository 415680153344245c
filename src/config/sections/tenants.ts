// tenants: who is calling, and what each may spend (api.md §10.2–3). Without the
// section every client is anonymous and unlimited.
import { z } from 'zod';
import { positiveInt } from './common.js';

const priority = z.enum(['high', 'normal', 'low']);
const PRIORITY = 'Who is shed first when node budgets run short.';

/** The limits of one tenant (or of one client address within it). Absent: unlimited. */
const limits = {
  // Protects the proxy.
  requestsPerSecond: positiveInt
    .optional()
    .describe(
      'Every request counts, hits too; over it: 429 `rate_limited` with `Retry-After` and `RateLimit-Limit`, `-Remaining`, `-Reset`. Unset: unlimited.',
    ),
  // Protects the nodes.
  nodeUnitsPerMinute: positiveInt
    .optional()
    .describe(
      "Only requests a node answers count, each by its route's cost (`tenants.costs`); once spent, a request that needs a node gets 429, a hit never does. Unset: unlimited.",
    ),
};

const SHA256 = /^[0-9a-f]{64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A key is never written in the file: its sha256 (hex), or the env variable that holds it. */
const KeySchema = z.union([
  z.strictObject({
    sha256: z.string().regex(SHA256).describe("The key's sha256, in hex (`printf %s KEY | sha256sum`)."),
  }),
  z.strictObject({
    env: z
      .string()
      .regex(ENV_NAME, 'must be an environment variable name')
      .describe('The environment variable that holds the key; not set (or empty): a config error.'),
  }),
]);

const origin = z
  .string()
  .regex(
    /^https?:\/\/[^/?#\s]+$/,
    'must be an origin such as https://dapp.example (scheme, host, optional port; no path)',
  );

const TenantSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be 1 to 63 of a-z, 0-9, ".", "_", "-" (it labels metrics)')
    .describe('The only thing of a tenant that is logged and exported (a metrics label).'),
  // Several keys: rotation.
  keys: z
    .array(KeySchema)
    .default([])
    .describe(
      'Its keys, each `{sha256: <hex of the key>}` or `{env: VARIABLE}`; several for rotation. A client sends `Authorization: Bearer <key>`; an unknown key gets 401. One key listed twice is a config error.',
    ),
  priority: priority.default('normal').describe(PRIORITY),
  ...limits,
  origins: z
    .array(origin)
    .min(1)
    .optional()
    .describe(
      'A client-side key (shipped in a web page) is accepted only on requests whose `Origin` is listed (else 403 `forbidden`). Unset: any origin.',
    ),
  perAddress: z
    .strictObject(limits)
    .optional()
    .describe('`requestsPerSecond` and `nodeUnitsPerMinute` for each client address within the tenant.'),
});

const AnonymousSchema = z.union([
  z.literal(false),
  z.strictObject({ priority: priority.default('low').describe(PRIORITY), ...limits }),
]);

const COST_NAME = /^(?:[a-z_]+|(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/v1[^\s?]*)$/;

/**
 * The defaults weigh what a request makes a node do. A table item, an account or
 * a transaction is one storage read; a block can carry thousands of
 * transactions; a view runs Move code (gas-metered, up to the node's view gas
 * limit); a submission is validated and enters the mempool; a simulation
 * executes the transaction in full.
 */
export const DEFAULT_COSTS: Readonly<Record<string, number>> = {
  raw_item: 1,
  tables: 1,
  accounts: 1,
  transactions: 1,
  blocks: 2,
  view: 5,
  passthrough: 1,
  'POST /v1/transactions': 10,
  'POST /v1/transactions/batch': 10,
  'POST /v1/transactions/simulate': 20,
  'POST /v1/transactions/simulate_bundle': 20,
};

/**
 * Node units of a request a node answers, by route family, or by a passthrough
 * route as "METHOD /v1/path"; the names given replace those defaults, the rest stay.
 */
const CostsSchema = z
  .record(z.string(), positiveInt)
  .superRefine((costs, ctx) => {
    for (const name of Object.keys(costs)) {
      if (!COST_NAME.test(name))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'must be a route family (view) or a passthrough route (POST /v1/transactions)',
        });
    }
  })
  .transform((costs) => ({ ...DEFAULT_COSTS, ...costs }))
  .default({ ...DEFAULT_COSTS });

export const TenantsSchema = z
  .strictObject({
    anonymous: AnonymousSchema.default({ priority: 'low' }).describe(
      'Clients without `Authorization`, limited per client address (`server.trustProxy` says which hop); `false`: refused with 401.',
    ),
    list: z.array(TenantSchema).default([]).describe('The tenants with keys.'),
    // A hop count or true with it is refused in schema.ts.
    trustedHeader: z
      .string()
      .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/)
      .transform((name) => name.toLowerCase())
      .optional()
      .describe(
        "A header naming the tenant, set by a trusted layer in front; honoured only from the addresses `server.trustProxy` lists (as nginx's `set_real_ip_from`). With `server.trustProxy` a hop count or `true` it is a config error: those say how many hops to believe, not who they are.",
      ),
    costs: CostsSchema.describe(
      'Node units of a request a node answers, by route family or by passthrough route (`POST /v1/transactions`: the longest `METHOD /v1/path` prefix that matches). The names given replace these defaults; the rest stay. A view runs Move code, a block carries many transactions, a submission is validated into the mempool, a simulation executes in full.',
    ),
  })
  .superRefine((tenants, ctx) => {
    const names = new Map<string, number>();
    tenants.list.forEach((tenant, index) => {
      if (tenant.name === 'anonymous')
        ctx.addIssue({
          code: 'custom',
          path: ['list', index, 'name'],
          message: "'anonymous' is the tenant of clients without a key",
        });
      const first = names.get(tenant.name);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['list', index, 'name'],
          message: `duplicate name (also tenants.list.${first})`,
        });
      names.set(tenant.name, first ?? index);
    });
  })
  .describe(
    'Who is calling, and what each may spend. Unset: every client is anonymous and unlimited. Replaces `rateLimit`, which is refused at start with a message naming its replacement.',
  );

export type Priority = z.output<typeof priority>;

// The admin listener's token is given as a key is.
export { KeySchema };
