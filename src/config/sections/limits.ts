// Limits on calls to the nodes (shedding); limits on clients are the tenants' (tenants.ts).
import { z } from 'zod';
import { nonNegativeInt, positiveInt } from './common.js';

export const SheddingSchema = z
  .strictObject({
    maxInFlight: positiveInt
      .default(10000)
      .describe(
        'Reads in flight to the nodes at once, proxy-wide; beyond it a read is answered 503 at once (coalesced requests count once).',
      ),
    budgetWaitMs: nonNegativeInt
      .default(50)
      .describe("How long a read waits for a node's budget (`upstreams[].maxInFlight`, `maxRps`) before it is shed."),
    shedFirst: z
      .enum(['none', 'latest', 'pinned'])
      .default('none')
      .describe(
        "`latest` or `pinned`: that class of reads may use only 80% of each node's `maxInFlight`, so it is shed first when node budgets run short.",
      ),
  })
  .prefault({})
  .describe('Load shedding: beyond these limits a read is answered 503 at once, never queued without bound.');
