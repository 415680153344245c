// A proxy in front of a node with a test's own redis-server as its shared tier,
// as the Redis tier suites build it.
import { expect } from 'vitest';
import type { SimNode } from '../../src/sim/index.js';
import { type ProxyHandle, proxy } from './proxy.js';

/** The key prefix of the proxies' Redis entries. */
export const PREFIX = 'test:';
export const COMMAND_TIMEOUT_MS = 200;
export const MAX_TTL_SECONDS = 3600;

/** Config overrides: probes every 50 ms, a 1 MB memory tier, and Redis at url with a fill lock. */
export function redisConfig(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    routing: { probeIntervalMs: 50 },
    cache: {
      memory: { maxBytes: 1_000_000 },
      redis: {
        url,
        keyPrefix: PREFIX,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        fillLock: true,
        fillLockMs: 2000,
        maxTtlSeconds: MAX_TTL_SECONDS,
      },
    },
    ...extra,
  };
}

/** A proxy in front of node with redisConfig(url, extra), connected to Redis. */
export async function redisProxy(
  url: string,
  node: SimNode,
  extra: Record<string, unknown> = {},
): Promise<ProxyHandle> {
  const p = await proxy([node], redisConfig(url, extra));
  expect(p.app.redis?.isReady(), 'the proxy is connected to Redis').toBe(true);
  return p;
}
