// Limits on calls to the nodes (shedding); limits on clients are the tenants' (tenants.ts).
import { z } from 'zod';
import { nonNegativeInt, positiveInt } from './common.js';

export const SheddingSchema = z
  .strictObject({
    maxInFlight: positiveInt.default(10000),
    // How long a read waits for a node's budget (upstreams[].maxInFlight / maxRps) before it is shed.
    budgetWaitMs: nonNegativeInt.default(50),
    // Which class of reads loses first when node budgets run short: it may use only 80% of a budget.
    shedFirst: z.enum(['none', 'latest', 'pinned']).default('none'),
  })
  .prefault({});
