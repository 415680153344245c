// tenants: who is calling, and what each may spend (api.md §10.2–3). Without the
// section every client is anonymous and unlimited.
import { z } from 'zod';
import { positiveInt } from './common.js';

const priority = z.enum(['high', 'normal', 'low']);

/** The limits of one tenant (or of one client address within it). Absent: unlimited. */
const limits = {
  // Protects the proxy: every request counts, hits too.
  requestsPerSecond: positiveInt.optional(),
  // Protects the nodes: only requests a node answers count, each by its route's cost.
  nodeUnitsPerMinute: positiveInt.optional(),
};

const SHA256 = /^[0-9a-f]{64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A key is never written in the file: its sha256 (hex), or the env variable that holds it. */
const KeySchema = z.union([
  z.strictObject({ sha256: z.string().regex(SHA256) }),
  z.strictObject({ env: z.string().regex(ENV_NAME, 'must be an environment variable name') }),
]);

const origin = z
  .string()
  .regex(
    /^https?:\/\/[^/?#\s]+$/,
    'must be an origin such as https://dapp.example (scheme, host, optional port; no path)',
  );

const TenantSchema = z.strictObject({
  // The only thing of a tenant that is logged and exported (a metrics label).
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be 1 to 63 of a-z, 0-9, ".", "_", "-" (it labels metrics)'),
  // Several keys: rotation.
  keys: z.array(KeySchema).default([]),
  priority: priority.default('normal'),
  ...limits,
  // A client-side key (shipped in a web page): accepted only from these origins.
  origins: z.array(origin).min(1).optional(),
  // Limits per client address within the tenant.
  perAddress: z.strictObject(limits).optional(),
});

const AnonymousSchema = z.union([z.literal(false), z.strictObject({ priority: priority.default('low'), ...limits })]);

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
    // Clients without a key, limited per client address; false: refused (401).
    anonymous: AnonymousSchema.default({ priority: 'low' }),
    list: z.array(TenantSchema).default([]),
    // A header naming the tenant, set by a trusted layer in front: accepted only from
    // the addresses server.trustProxy lists (a hop count or true with it is refused in schema.ts).
    trustedHeader: z
      .string()
      .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/)
      .transform((name) => name.toLowerCase())
      .optional(),
    costs: CostsSchema,
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
  });

export type Priority = z.output<typeof priority>;

// The admin listener's token is given as a key is.
export { KeySchema };
