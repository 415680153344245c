// Per-client rate limiting (off by default), checked by the edge before anything
// else is done for a request, whatever path serves it. Keyed by client
// address (server.trustProxy decides which hop that is). A limited client gets the
// node error body with 503 (429 is not a status nodes answer with, SPEC §5).
//
// Counting is synchronous, in fixed windows aligned to the clock. With
// rateLimit.redis every instance also adds its requests to a shared counter per
// client and window, and refuses once the shared total it last heard of is over
// the limit: instances share one limit, a request never waits for Redis, and a
// Redis outage counts nothing (fail open). The requests of a client are added
// together (one INCRBY per client at most every SHARE_EVERY_MS, not one INCR per
// request), so counting costs a hit nothing but a Map update.
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

/** How long an instance's requests may wait to be added to the shared counters: the lag of the shared limit. */
const SHARE_EVERY_MS = 100;

export class ClientRateLimiter {
  private window = -1;
  private readonly counts = new Map<string, number>();
  /** per client, the shared total Redis last reported for this window */
  private readonly shared = new Map<string, number>();
  /** per client, requests of this window not added to the shared counter yet */
  private readonly unshared = new Map<string, number>();
  /** per client, its shared counter's key without the window (a sha256 each, made once) */
  private readonly sharedKeys = new Map<string, string>();
  private shareTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly clientAddress: (req: IncomingMessage) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts the request; a NodeError to answer with when the client is over its limit. */
  admit(req: IncomingMessage): NodeError | null {
    const { max, timeWindowMs } = this.settings;
    const now = this.now();
    const window = Math.floor(now / timeWindowMs);
    if (window !== this.window) {
      // The last window's requests still count there.
      this.share();
      this.window = window;
      this.counts.clear();
      this.shared.clear();
      this.sharedKeys.clear();
    }
    const client = this.clientAddress(req);
    const count = (this.counts.get(client) ?? 0) + 1;
    this.counts.set(client, count);
    if (this.settings.redis !== undefined) {
      this.unshared.set(client, (this.unshared.get(client) ?? 0) + 1);
      this.shareTimer ??= setTimeout(() => this.share(), SHARE_EVERY_MS).unref();
    }
    if (Math.max(count, this.shared.get(client) ?? 0) <= max) return null;
    const retryMs = (window + 1) * timeWindowMs - now;
    return NodeError.unavailable(`rate limit exceeded: at most ${max} requests per ${timeWindowMs} ms per client; retry in ${retryMs} ms`, 'rate_limited');
  }

  /**
   * Adds this window's requests not shared yet to each client's shared counter,
   * and learns the totals. Called every SHARE_EVERY_MS while requests come, at a
   * window's end, and at shutdown.
   */
  share(): void {
    clearTimeout(this.shareTimer);
    this.shareTimer = undefined;
    const redis = this.settings.redis;
    if (redis === undefined) return;
    const window = this.window;
    for (const [client, added] of this.unshared) {
      const key = `${this.sharedKey(client)}:${window}`;
      redis.incrby(key, added).then(
        (total) => {
          // This instance made the counter: it expires after its window.
          if (total === added) redis.pexpire(key, this.settings.timeWindowMs * 2).catch(() => undefined);
          if (this.window === window && total > (this.shared.get(client) ?? 0)) this.shared.set(client, total);
        },
        () => undefined,
      );
    }
    this.unshared.clear();
  }

  private sharedKey(client: string): string {
    let key = this.sharedKeys.get(client);
    if (key === undefined) {
      // Hashed: with trustProxy the address is client-sent text, and must not become a raw Redis key.
      key = `${this.settings.keyPrefix}rate-limit:${createHash('sha256').update(client).digest('hex')}`;
      this.sharedKeys.set(client, key);
    }
    return key;
  }
}

/** The client's address as server.trustProxy says to read it (fastify's rules, for raw requests too). */
export function clientAddressOf(trustProxy: boolean | number | string): (req: IncomingMessage) => string {
  if (trustProxy === false) return (req) => req.socket.remoteAddress ?? '';
  const trust: (addr: string, hop: number) => boolean =
    trustProxy === true ? () => true : typeof trustProxy === 'number' ? (_addr, hop) => hop < trustProxy : proxyAddr.compile(trustProxy.split(',').map((s) => s.trim()));
  return (req) => proxyAddr(req, trust);
}
