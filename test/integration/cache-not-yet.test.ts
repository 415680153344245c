// A "not yet" answer (a version, a block or a transaction not found above the
// node's latest) answers only the reads that were already waiting when the node
// call that got it was sent. Once the node has the item, a read sent after that
// call gets the item, on the instance that asked and on another sharing its
// Redis: never the earlier "not found", through the fill outcome or by joining
// the call (api.md §7: version_not_found is never cached; §8 "Across instances").
import { describe, expect, it, vi } from 'vitest';
import { cacheOf, expectStatus, hex, itemAt, PRESENT, served } from '../helpers/cache.js';
import { expectNodeErrorBody } from '../helpers/expect.js';
import { heldAnswers } from '../helpers/held-answers.js';
import { call, proxy, QUIET, rawItem, type Reply, sim } from '../helpers/proxy.js';
import { redisConfig, redisProxy } from '../helpers/redis-cache.js';
import { useRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const server = useRedisServer({ flushEach: true });

const itemRead = (url: string, version: bigint): Promise<Reply> => rawItem(url, hex(PRESENT), { version });

/** How many of a spied memory tier's lookups missed: a read past the memory tier, on its way to a fill. */
const misses = (lookups: { mock: { results: Array<{ type: string; value: unknown }> } }): number =>
  lookups.mock.results.filter((r) => r.type === 'return' && r.value === undefined).length;

/** What went wrong with a read sent once the node had `version`, or null when it got the item. */
function staleness(reply: Reply, version: bigint, label: string): string | null {
  if (reply.status === 200 && reply.body.equals(itemAt(PRESENT, version))) return null;
  return `${label}: ${reply.status} ${cacheOf(reply)} ${reply.body.toString('utf8').slice(0, 120)}`;
}

describe('two instances on one Redis', () => {
  it('a version read on A before the node has it is answered on A and B once the node has it, 30 times over', async () => {
    const node = await sim();
    const a = await redisProxy(server.url, node);
    const b = await redisProxy(server.url, node);
    const stale: string[] = [];
    for (let loop = 0; loop < 30; loop++) {
      const next = node.ledger.info().ledgerVersion + 1n;
      expectNodeErrorBody(
        await itemRead(a.url, next),
        404,
        'version_not_found',
        `loop ${loop}: read before the node has ${next}`,
      );
      node.ledger.advance(1);
      const [onB, onA] = await Promise.all([itemRead(b.url, next), itemRead(a.url, next)]);
      for (const problem of [staleness(onB, next, `loop ${loop} on B`), staleness(onA, next, `loop ${loop} on A`)])
        if (problem !== null) stale.push(problem);
    }
    expect(stale, 'reads sent after the node reached the version').toEqual([]);
  });

  it("reads sent on A and B while A's call is in flight, after the node reached the version, get the item; A's first read its 404", async () => {
    const node = await sim();
    // A's node answers at once and its answer is held on the way back: the call is in flight.
    const hop = await heldAnswers(node.url);
    const a = await proxy([{ url: hop.url, name: 'node0' }], redisConfig(server.url));
    const b = await redisProxy(server.url, node);
    const waits = vi.spyOn(b.app.redis!, 'awaitFill');
    const lookups = vi.spyOn(a.app.memory, 'get');
    for (let loop = 0; loop < 5; loop++) {
      const next = node.ledger.info().ledgerVersion + 1n;
      hop.hold('/raw_item');
      const early = itemRead(a.url, next);
      await until(() => hop.held() === 1, 5000, "the node's 404 to A's call, held on its way");
      node.ledger.advance(1);
      const [waited, looked] = [waits.mock.calls.length, misses(lookups)];
      const onB = itemRead(b.url, next);
      const onA = itemRead(a.url, next);
      await until(() => waits.mock.calls.length > waited, 5000, "B waiting for A's fill");
      await until(
        () => misses(lookups) > looked,
        5000,
        'the second read on A past its memory tier, joining the call in flight',
      );
      const calls = served(node);
      hop.release();
      expectNodeErrorBody(
        await early,
        404,
        'version_not_found',
        `loop ${loop}: A's read, waiting when its call was sent`,
      );
      expect(staleness(await onB, next, `loop ${loop} on B`)).toBeNull();
      expect(staleness(await onA, next, `loop ${loop} on A`)).toBeNull();
      // B asked for itself; A's second read found B's answer in Redis, or asked too.
      expect(served(node) - calls, `loop ${loop}: node calls after the release`).toBeGreaterThanOrEqual(1);
      expect(served(node) - calls, `loop ${loop}: node calls after the release`).toBeLessThanOrEqual(2);
    }
  });
});

describe('one instance: a read that joins a node call sent before it', () => {
  it.each([
    {
      label: 'raw_item at the next version',
      match: '/raw_item',
      code: 'version_not_found',
      ahead: (latest: bigint) => ({ advance: 1n, read: (url: string) => itemRead(url, latest + 1n) }),
    },
    {
      label: 'a transaction by the next version',
      match: '/transactions/by_version/',
      code: 'transaction_not_found',
      ahead: (latest: bigint) => ({
        advance: 1n,
        read: (url: string) => call(url, `/v1/transactions/by_version/${latest + 1n}`),
      }),
    },
    {
      label: 'the first block not complete',
      match: '/blocks/by_height/',
      code: 'block_not_found',
      // A block of height h holds versions 4h to 4h + 3: complete once the latest is 4h + 3.
      ahead: (latest: bigint) => {
        const height = (latest + 1n) / 4n;
        return {
          advance: 4n * height + 3n - latest,
          read: (url: string) => call(url, `/v1/blocks/by_height/${height}`),
        };
      },
    },
  ])(
    '$label: the earlier read gets its 404, the later one its own node call and the item',
    async ({ match, code, ahead }) => {
      const node = await sim();
      const hop = await heldAnswers(node.url);
      const { app, url } = await proxy([{ url: hop.url, name: 'node0' }], QUIET);
      const lookups = vi.spyOn(app.memory, 'get');
      const { advance, read } = ahead(node.ledger.info().ledgerVersion);
      const calls = served(node);
      hop.hold(match);
      const early = read(url);
      await until(() => hop.held() === 1, 5000, "the node's 404, held on its way");
      node.ledger.advance(advance);
      const looked = misses(lookups);
      const late = read(url);
      await until(
        () => misses(lookups) > looked,
        5000,
        'the later read past the memory tier, joining the call in flight',
      );
      hop.release();
      expectNodeErrorBody(await early, 404, code, 'the read waiting when the call was sent');
      const reply = await late;
      expectStatus(reply, 200, 'the read that came after the call was sent');
      expect(reply.body.equals((await read(node.url)).body), 'the node’s own answer').toBe(true);
      expect(served(node) - calls, 'the held call, the later read’s own, and the test’s direct read').toBe(3);
    },
  );
});
