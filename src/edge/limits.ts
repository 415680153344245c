// The tenants' limits (api.md §10.3): requestsPerSecond protects the proxy (every
// request counts, hits too); nodeUnitsPerMinute protects the nodes (only what a
// node answers is charged, by its route's cost, once it is known how the request
// was served; a request that needs a node is refused once the units are spent,
// a hit never is). A tenant's limits count for the whole tenant, and its
// perAddress limits for each client address within it; the anonymous tenant's
// count per client address. Over a limit: 429 with Retry-After and the RateLimit
// headers of the limit that refused it.
import { NodeError } from '../errors.js';
import type { Tenant, TenantLimits } from './tenants.js';
import { type SharedCounterStore, WindowCounters } from './window-counters.js';

export interface LimitsSettings {
  /** cache.redis.keyPrefix: shared counters live under it */
  keyPrefix: string;
  /** shares the counts across instances and workers; absent = counted in this process */
  redis?: SharedCounterStore;
  now?: () => number;
}

/** Client addresses whose scopes are kept per tenant: clients cycling addresses cannot grow it without bound. */
const SCOPES_KEPT = 10_000;

/** The counters a request of `tenant` from `address` counts in, with the limits that apply to each. */
interface Scope {
  key: string;
  limits: TenantLimits | undefined;
  what: string;
}

/** The two counters the limits count in: requests per second, and node units per minute. */
export interface LimitCounters {
  requests: WindowCounters;
  units: WindowCounters;
}

/** The limits' counters for `settings`: the two windows, their keys under keyPrefix. */
export function limitCounters(settings: LimitsSettings): LimitCounters {
  const { keyPrefix, redis, now } = settings;
  return {
    requests: new WindowCounters({ windowMs: 1000, keyPrefix: `${keyPrefix}requests:`, redis, now }),
    units: new WindowCounters({ windowMs: 60_000, keyPrefix: `${keyPrefix}node-units:`, redis, now }),
  };
}

export class Limits {
  private readonly requests: WindowCounters;
  private readonly units: WindowCounters;
  /**
   * Each tenant's scopes by client address, made once: a request then builds no
   * counter key, and its counters' maps find a string whose hash is known. A
   * reload's tenants are new objects, so the old ones' scopes go with them.
   */
  private readonly scopesKept = new WeakMap<Tenant, Map<string, readonly Scope[]>>();

  constructor(counters: LimitCounters) {
    this.requests = counters.requests;
    this.units = counters.units;
  }

  /** Counts one request; the 429 to answer with when it is over a requestsPerSecond. */
  admit(tenant: Tenant, address: string): NodeError | null {
    for (const scope of this.scopes(tenant, address)) {
      const limit = scope.limits?.requestsPerSecond;
      if (limit === undefined) continue;
      if (this.requests.add(scope.key, 1) > limit)
        return tooMany(`${scope.what} is over its requestsPerSecond (${limit})`, limit, this.requests);
    }
    return null;
  }

  /** The 429 a request that needs a node gets once node units are spent; null while some are left. */
  nodeWorkRefusal(tenant: Tenant, address: string): NodeError | null {
    for (const scope of this.scopes(tenant, address)) {
      const limit = scope.limits?.nodeUnitsPerMinute;
      if (limit !== undefined && this.units.total(scope.key) >= limit)
        return tooMany(`${scope.what} has spent its nodeUnitsPerMinute (${limit})`, limit, this.units);
    }
    return null;
  }

  /** Charges node units, once it is known that a node answered. */
  charge(tenant: Tenant, address: string, units: number): void {
    for (const scope of this.scopes(tenant, address))
      if (scope.limits?.nodeUnitsPerMinute !== undefined) this.units.add(scope.key, units);
  }

  private scopes(tenant: Tenant, address: string): readonly Scope[] {
    let byAddress = this.scopesKept.get(tenant);
    if (byAddress === undefined) {
      byAddress = new Map();
      this.scopesKept.set(tenant, byAddress);
    }
    let found = byAddress.get(address);
    if (found === undefined) {
      if (byAddress.size >= SCOPES_KEPT) byAddress.clear();
      found = scopesOf(tenant, address);
      byAddress.set(address, found);
    }
    return found;
  }

  /** Shares the counts not shared yet (at shutdown). */
  share(): void {
    this.requests.share();
    this.units.share();
  }
}

function scopesOf(tenant: Tenant, address: string): Scope[] {
  if (tenant.byAddress)
    return [{ key: `address:${tenant.name}:${address}`, limits: tenant, what: `client ${address}` }];
  const out: Scope[] = [{ key: `tenant:${tenant.name}`, limits: tenant, what: `tenant ${tenant.name}` }];
  if (tenant.perAddress !== undefined)
    out.push({
      key: `address:${tenant.name}:${address}`,
      limits: tenant.perAddress,
      what: `a client ${address} of tenant ${tenant.name}`,
    });
  return out;
}

function tooMany(what: string, limit: number, counters: WindowCounters): NodeError {
  const seconds = String(Math.max(1, Math.ceil(counters.msUntilReset() / 1000)));
  return new NodeError(429, 'rate_limited', `rate limited: ${what}; retry in ${seconds} s`, {
    reason: 'rate_limited',
    headers: {
      'retry-after': seconds,
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': seconds,
    },
  });
}
