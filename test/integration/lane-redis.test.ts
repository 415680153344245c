// Redis hits on the lane: a proxy whose memory tier holds nothing fills Redis
// through lane requests on kept-alive connections, and then serves every one of
// them from Redis, as through node:http.
import { describe, expect, it } from 'vitest';
import { HANDLE, proxy, QUIET, sim } from '../helpers/proxy.js';
import { httpRequest, openSocket, rawReplies } from '../helpers/raw-socket.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const redis = useRedisServer();
const KEYS = 40;

/** Sends `count` raw_item reads (one per key) one after another on one connection; the replies' X-Cache and tier. */
async function reads(url: string, count: number): Promise<string[]> {
  const s = await openSocket(url);
  for (let i = 0; i < count; i++) {
    const body = `{"key":"0x${(i + 1).toString(16).padStart(16, '0')}"}`;
    s.socket.write(
      httpRequest(
        `POST /v1/tables/${HANDLE}/raw_item?ledger_version=990 HTTP/1.1`,
        ['Host: proxy.test', 'content-type: application/json', 'accept: application/x-bcs'],
        body,
      ),
    );
    await until(() => rawReplies(Buffer.from(s.received(), 'latin1'), false).length > i, 5000, `reply ${i}`);
  }
  return rawReplies(Buffer.from(s.received(), 'latin1'), false).map(
    (r) => `${r.status} ${r.headers['x-cache']}/${r.headers['x-cache-tier'] ?? '-'}`,
  );
}

describe('the lane with the Redis tier', () => {
  it('a fill is a Redis hit the next time, as through node:http', async () => {
    const node = await sim({ startVersion: 1000n });
    const seen: Record<string, string[]> = {};
    for (const lane of [true, false]) {
      const p = await proxy([node], {
        ...QUIET,
        server: { host: '127.0.0.1', port: 0, lane },
        cache: { memory: { maxBytes: 1 }, redis: { url: redis.url, keyPrefix: `lane-${lane}:` } },
      });
      await reads(p.url, KEYS);
      seen[String(lane)] = await reads(p.url, KEYS);
    }
    expect(seen.false!.filter((r) => r === '200 HIT/redis').length).toBeGreaterThan(KEYS / 4);
    expect(seen.true).toEqual(seen.false);
  });
});
