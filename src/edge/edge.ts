// The edge: what the proxy decides about a request before serving it, once, for
// every entry path. It adds the headers every reply of the exchange carries
// (CORS; for a trusted layer in front, the nodes' headroom), answers a CORS
// preflight itself, knows the tenant (api.md §10.2), and
// admits the request or refuses it (an unknown key, a client-side key from
// another origin, a tenant over its limits); once the reply is written it
// charges the tenant for the node work it caused.
import { NodeError } from '../errors.js';
import type { Cors } from './cors.js';
import type { NodeCosts } from './costs.js';
import type { Exchange } from './exchange.js';
import type { Limits } from './limits.js';
import type { PublicRequest } from './message.js';
import type { TenantDirectory } from './tenants.js';

export interface EdgeDeps {
  cors: Cors;
  tenants: TenantDirectory;
  limits: Limits;
  costs: NodeCosts;
  /** the client's address, as server.trustProxy says to read it */
  clientAddress(req: PublicRequest): string;
  /** whether the peer is an address server.trustProxy lists: it may name the tenant, and is told the headroom */
  trustedPeer(req: PublicRequest): boolean;
  /** the share of node budget left, 0 to 1: told to a trusted layer in front, so it can shed before the proxy must */
  headroom(): number;
}

/** Replies served without a node's work: they cost no node units. */
const FREE = new Set(['HIT', 'COALESCED', 'STALE']);

export class Edge {
  constructor(private readonly deps: EdgeDeps) {}

  /**
   * Answers a CORS preflight itself (no node call, no limit counted) and says so;
   * for any other request, sets the headers the exchange's replies carry.
   */
  answeredPreflight(exchange: Exchange): boolean {
    if (this.deps.cors.answeredPreflight(exchange)) return true;
    if (this.deps.trustedPeer(exchange.req))
      (exchange.edgeHeaders ??= []).push('x-proxy-headroom', this.deps.headroom().toFixed(3));
    return false;
  }

  /** Knows the tenant and counts the request against its limits; the refusal to answer with, if any. */
  admit(exchange: Exchange): NodeError | null {
    const { tenants, limits } = this.deps;
    const req = exchange.req;
    const configured = tenants.configured;
    const tenant = tenants.identify(req, { trustedPeer: configured && this.deps.trustedPeer(req) });
    if (tenant instanceof NodeError) return tenant;
    exchange.tenant = tenant;
    if (!configured) return null;
    const forbidden = tenants.originRefusal(tenant, req);
    if (forbidden !== null) return forbidden;
    const client = this.deps.clientAddress(req);
    exchange.client = client;
    return limits.admit(tenant, client);
  }

  /** The refusal of a request that needs a node while its tenant's node units are spent; null when it may go. */
  nodeWorkRefusal(exchange: Exchange): NodeError | null {
    const { tenant, client } = exchange;
    if (tenant === undefined || client === undefined) return null;
    return this.deps.limits.nodeWorkRefusal(tenant, client);
  }

  /** Charges the node units of a reply a node answered; the units charged. */
  settle(exchange: Exchange): number {
    const { tenant, client } = exchange;
    if (tenant === undefined || exchange.upstream === undefined || FREE.has(exchange.cache)) return 0;
    const units = this.deps.costs.of(exchange);
    if (client !== undefined) this.deps.limits.charge(tenant, client, units);
    return units;
  }
}
