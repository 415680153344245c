// Per-client rate limiting (off by default), checked before anything else is
// done for a request: in the fast path for memory hits and in an onRequest hook
// for the rest, so turning it on does not turn the fast path off. Keyed by client
// address (server.trustProxy decides which hop that is). A limited client gets the
// node error body with 503 (429 is not a status nodes answer with, SPEC §5).
//
// Counting is synchronous, in fixed windows aligned to the clock. With
// rateLimit.redis every instance also adds each request to a shared counter per
// client and window (one INCR, not awaited), and refuses once the shared total
// it last heard of is over the limit: instances share one limit, a request never
// waits for Redis, and a Redis outage counts nothing (fail open).
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { Cluster, Redis } from 'ioredis';
import { NodeError } from '../errors.js';

export interface RateLimitSettings {
  max: number;
  timeWindowMs: number;
  /** cache.redis.keyPrefix: shared counters live under it, like every key of ours */
  keyPrefix: string;
  /** a client for shared counters; absent = counted in this process */
  redis?: Redis | Cluster;
}

/** Marks a request already counted (by the fast path), so the hook does not count it again. */
const COUNTED = Symbol('ledger-proxy.rateCounted');
type Counted = IncomingMessage & { [COUNTED]?: true };

export class ClientRateLimiter {
  private window = -1;
  private readonly counts = new Map<string, number>();
  /** per client, the shared total Redis last reported for this window */
  private readonly shared = new Map<string, number>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly clientAddress: (req: IncomingMessage) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts the request once; a NodeError to answer with when the client is over its limit. */
  admit(req: IncomingMessage): NodeError | null {
    const counted = req as Counted;
    if (counted[COUNTED]) return null;
    counted[COUNTED] = true;
    const { max, timeWindowMs } = this.settings;
    const now = this.now();
    const window = Math.floor(now / timeWindowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
      this.shared.clear();
    }
    const client = this.clientAddress(req);
    const count = (this.counts.get(client) ?? 0) + 1;
    this.counts.set(client, count);
    if (this.settings.redis !== undefined) this.countShared(client, window);
    if (Math.max(count, this.shared.get(client) ?? 0) <= max) return null;
    const retryMs = (window + 1) * timeWindowMs - now;
    return NodeError.unavailable(`rate limit exceeded: at most ${max} requests per ${timeWindowMs} ms per client; retry in ${retryMs} ms`);
  }

  private countShared(client: string, window: number): void {
    const redis = this.settings.redis!;
    // Hashed: with trustProxy the address is client-sent text, and must not become a raw Redis key.
    const key = `${this.settings.keyPrefix}rate-limit:${createHash('sha256').update(client).digest('hex')}:${window}`;
    redis.incr(key).then(
      (total) => {
        if (total === 1) redis.pexpire(key, this.settings.timeWindowMs * 2).catch(() => undefined);
        if (this.window === window && total > (this.shared.get(client) ?? 0)) this.shared.set(client, total);
      },
      () => undefined,
    );
  }
}

/** The client's address as server.trustProxy says to read it (fastify's rules, for raw requests too). */
export function clientAddressOf(trustProxy: boolean | number | string): (req: IncomingMessage) => string {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? '';
  const trust: (addr: string, hop: number) => boolean =
    trustProxy === true ? () => true : typeof trustProxy === 'number' ? (_addr, hop) => hop < trustProxy : proxyAddr.compile(trustProxy.split(',').map((s) => s.trim()));
  return (req) => proxyAddr(req, trust);
}
