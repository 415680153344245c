// Per-client rate limiting (off by default). Keyed by client IP (server.trustProxy
// decides which hop that is), optionally counted in Redis so that every instance
// shares one limit. A limited client gets the node error body with 503: 429 is not
// a status nodes answer with (SPEC §5).
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis, Cluster } from 'ioredis';
import { NodeError } from '../errors.js';

export interface RateLimitSettings {
  max: number;
  timeWindowMs: number;
  /** cache.redis.keyPrefix: shared counters live under it, like every key of ours */
  keyPrefix: string;
  /** a client for shared counters; absent = counted in this process */
  redis?: Redis | Cluster;
}

export async function registerRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: settings.max,
    timeWindow: settings.timeWindowMs,
    redis: settings.redis,
    nameSpace: `${settings.keyPrefix}rate-limit:`,
    // A Redis outage must not turn into refused clients: count nothing then.
    skipOnError: true,
    // Hashed: with trustProxy the "IP" is client-sent text, and must not become a raw Redis key.
    keyGenerator: (request) => createHash('sha256').update(request.ip).digest('hex'),
    errorResponseBuilder: (_request, context) =>
      NodeError.unavailable(`rate limit exceeded: at most ${context.max} requests per ${settings.timeWindowMs} ms per client; retry in ${context.after}`),
  });
}
