// The tenants' metrics (api.md §10.4): requests by outcome, hits and node units,
// by tenant name only (the config's names bound the label's cardinality).
// Counted in plain numbers per request, turned into counters at scrape time.
import { Counter, type Registry } from 'prom-client';
import { TENANT_OUTCOMES, type TenantOutcome } from '../reply/accounting.js';

type TenantCounts = Record<TenantOutcome, number> & { hits: number; nodeUnits: number };

export class TenantMetrics {
  private readonly tenants = new Map<string, TenantCounts>();

  constructor(registers: Registry[]) {
    const tenants = this.tenants;
    new Counter({
      name: 'ledger_proxy_tenant_requests_total',
      help: 'Requests by tenant (the name in tenants.list, or anonymous) and outcome: served, unauthorized, forbidden, rate_limited, shed',
      labelNames: ['tenant', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants)
          for (const outcome of TENANT_OUTCOMES) this.inc({ tenant, outcome }, counts[outcome]);
      },
    });
    new Counter({
      name: 'ledger_proxy_tenant_hits_total',
      help: 'Requests by tenant answered from the cache (memory or Redis), at no node cost',
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants) this.inc({ tenant }, counts.hits);
      },
    });
    new Counter({
      name: 'ledger_proxy_tenant_node_units_total',
      help: 'Node units charged by tenant: the cost of each request a node answered (tenants.costs)',
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, counts] of tenants) this.inc({ tenant }, counts.nodeUnits);
      },
    });
  }

  request(tenant: string, outcome: TenantOutcome, hit: boolean, nodeUnits: number): void {
    const counts = this.counts(tenant);
    counts[outcome]++;
    if (hit) counts.hits++;
    counts.nodeUnits += nodeUnits;
  }

  /** Known tenants are exported from the start, at zero. */
  known(names: readonly string[]): void {
    for (const name of names) this.counts(name);
  }

  private counts(tenant: string): TenantCounts {
    let counts = this.tenants.get(tenant);
    if (counts === undefined)
      this.tenants.set(
        tenant,
        (counts = { served: 0, unauthorized: 0, forbidden: 0, rate_limited: 0, shed: 0, hits: 0, nodeUnits: 0 }),
      );
    return counts;
  }
}
