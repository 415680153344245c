// The change feed's pages and cache.verify (upstream/feed-source.ts): which node each
// page is asked of, and when a page is taken. The pool is a stand-in that records each
// call and answers as each node is scripted to: what is decided here is only whether
// a second node is asked, and what its answer does to the page.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';
import { type FeedPageCheck, PoolFeedSource } from '../../src/upstream/feed-source.js';
import type { UpstreamPool } from '../../src/upstream/pool.js';
import { rejectedBy } from '../helpers/expect.js';

/** A page of `count` transactions, as far as the source reads one: its count, then ten bytes each. */
const pageOf = (count: number, fill = 1): Buffer =>
  Buffer.concat([Buffer.of(count), ...Array.from({ length: count }, (_, i) => Buffer.alloc(10, fill + i))]);
const answer = (upstream: string, body: Buffer, status = 200): NodeAnswer => ({
  status,
  contentType: 'application/x-bcs',
  body,
  upstream,
  ledger: null,
});

interface Asked {
  path: string;
  minVersion?: bigint;
  exclude?: string;
}

/** A pool whose first call is answered by `first` and any call excluding it by `second`. */
function scripted(first: NodeAnswer, second: NodeAnswer | Error) {
  const asked: Asked[] = [];
  const pool = {
    chainId: () => 4,
    forward: async (call: { path: string }, route: { minVersion?: bigint; exclude?: string }) => {
      asked.push({ path: call.path, minVersion: route.minVersion, exclude: route.exclude });
      if (route.exclude === undefined) return first;
      if (second instanceof Error) throw second;
      return second;
    },
  } as unknown as UpstreamPool;
  return { pool, asked };
}

function source(
  pool: UpstreamPool,
  mode: 'off' | 'sample' | 'always',
  draws: number[] = [],
): { feed: PoolFeedSource; outcomes: FeedPageCheck[] } {
  const outcomes: FeedPageCheck[] = [];
  const feed = new PoolFeedSource({
    pool,
    verify: { mode, sampleRatio: 0.5 },
    logger: pino({ level: 'silent' }),
    onCheck: (o) => outcomes.push(o),
    random: () => draws.shift() ?? 0.99,
  });
  return { feed, outcomes };
}

describe('PoolFeedSource', () => {
  it('off: one node is asked, at low priority, for the versions from the start', async () => {
    const { pool, asked } = scripted(answer('a', pageOf(3)), new Error('not asked'));
    const { feed, outcomes } = source(pool, 'off');
    expect((await feed.feedPage(100n, 50)).upstream).toBe('a');
    expect(asked).toEqual([{ path: '/v1/transactions?start=100&limit=50', minVersion: 100n, exclude: undefined }]);
    expect(outcomes).toEqual([]);
  });

  it('always: the same versions are asked of another node, and the same bytes take the page', async () => {
    const { pool, asked } = scripted(answer('a', pageOf(3)), answer('b', pageOf(3)));
    const { feed, outcomes } = source(pool, 'always');
    expect((await feed.feedPage(100n, 50)).upstream).toBe('a');
    expect(asked[1]).toEqual({ path: '/v1/transactions?start=100&limit=3', minVersion: 100n, exclude: 'a' });
    expect(outcomes).toEqual(['agreed']);
  });

  it('always: a second node behind the page vouches for the versions it has, and the page is cut to those', async () => {
    const behind = answer('b', pageOf(2));
    const { pool } = scripted(answer('a', pageOf(3)), behind);
    const { feed, outcomes } = source(pool, 'always');
    expect(await feed.feedPage(100n, 50)).toBe(behind);
    expect(outcomes).toEqual(['agreed']);
  });

  it('always: a second node behind the page with other bytes for the versions it has takes neither', async () => {
    const { pool } = scripted(answer('a', pageOf(3, 1)), answer('b', pageOf(2, 7)));
    const { feed, outcomes } = source(pool, 'always');
    await rejectedBy(NodeError, feed.feedPage(100n, 50));
    expect(outcomes).toEqual(['disagreed']);
  });

  it('always: other bytes for the same versions take neither page', async () => {
    const { pool } = scripted(answer('a', pageOf(3, 1)), answer('b', pageOf(3, 2)));
    const { feed, outcomes } = source(pool, 'always');
    expect((await rejectedBy(NodeError, feed.feedPage(100n, 50))).message).toMatch(/a and b sent different pages/);
    expect(outcomes).toEqual(['disagreed']);
  });

  it.each([
    ['a second node without the versions', answer('b', pageOf(0))],
    ['an error from the second node', answer('b', Buffer.from('{}'), 503)],
    ['no second node', NodeError.unavailable('no upstream could answer')],
  ])('always: %s leaves the page untaken, unverified', async (_, second) => {
    const { pool } = scripted(answer('a', pageOf(3)), second);
    const { feed, outcomes } = source(pool, 'always');
    expect((await rejectedBy(NodeError, feed.feedPage(100n, 50))).message).toMatch(
      /no second node sent the page from version 100/,
    );
    expect(outcomes).toEqual(['unverified']);
  });

  it.each([
    ['an error answer', answer('a', Buffer.from('{}'), 410)],
    ['an empty page', answer('a', pageOf(0))],
  ])('always: %s is the follower’s to judge, with no second node asked', async (_, first) => {
    const { pool, asked } = scripted(first, new Error('not asked'));
    const { feed, outcomes } = source(pool, 'always');
    expect(await feed.feedPage(100n, 50)).toBe(first);
    expect([asked.length, outcomes]).toEqual([1, []]);
  });

  it('sample: a page the draw passes over is taken unchecked, until two nodes disagree; then every page is checked until two agree', async () => {
    const honest = pageOf(3, 1);
    let second = answer('b', pageOf(3, 2));
    const asked: Asked[] = [];
    const pool = {
      chainId: () => 4,
      forward: async (call: { path: string }, route: { exclude?: string }) => {
        asked.push({ path: call.path, exclude: route.exclude });
        return route.exclude === undefined ? answer('a', honest) : second;
      },
    } as unknown as UpstreamPool;
    // Drawn (0.1 < 0.5), then never again (0.99).
    const { feed, outcomes } = source(pool, 'sample', [0.99, 0.1]);
    await feed.feedPage(100n, 50);
    expect(outcomes).toEqual([]);
    await rejectedBy(NodeError, feed.feedPage(100n, 50));
    await rejectedBy(NodeError, feed.feedPage(100n, 50));
    expect(outcomes).toEqual(['disagreed', 'disagreed']);
    second = answer('b', honest);
    await feed.feedPage(100n, 50);
    await feed.feedPage(103n, 50);
    expect(outcomes).toEqual(['disagreed', 'disagreed', 'agreed']);
    expect(asked.filter((a) => a.exclude !== undefined)).toHaveLength(3);
  });
});
