// What a fill lock's holder tells another instance's waiters (api.md §8 "Across
// instances"): an answer, stored or one-off, as it is; a "not yet" never, since
// no waiter there can show it was waiting when the holder's call was sent.
import { describe, expect, it } from 'vitest';
import type { FillOutcome } from '../../src/cache/store.js';
import { FillCoordinator, type NodeFill } from '../../src/serve/fill.js';
import type { SharedStore } from '../../src/serve/ports.js';
import type { StoredAnswer } from '../../src/model/read.js';
import { until } from '../helpers/until.js';

/** A Redis with no entry, whose fill lock this instance takes, and which records what is published. */
function sharedStore(): SharedStore & { published: FillOutcome[]; released: number } {
  const store = {
    tier: 'redis' as const,
    published: [] as FillOutcome[],
    released: 0,
    get: async () => undefined,
    set: async () => undefined,
    delete: async () => undefined,
    close: async () => undefined,
    isHealthy: () => true,
    tryLock: async () => ({ release: async () => void store.released++ }),
    publishFill: async (_key: string, outcome: FillOutcome) => void store.published.push(outcome),
    awaitFill: async () => undefined,
  };
  return store;
}

const answer = (status: number): StoredAnswer => ({
  status,
  contentType: 'application/json',
  body: Buffer.from('{}'),
  version: 0n,
});

async function holderFill(
  node: NodeFill,
): Promise<{ store: ReturnType<typeof sharedStore>; filled: Awaited<ReturnType<FillCoordinator['fill']>> }> {
  const store = sharedStore();
  const fills = new FillCoordinator({ store, settings: { fillLock: true, fillLockMs: 1000 } });
  const filled = await fills.fill('k', Date.now() + 1000, {
    usable: () => true,
    refusal: () => null,
    fromNode: async () => node,
  });
  await until(() => store.released === 1, 1000, 'the lock released');
  return { store, filled };
}

describe('what the holder of a fill lock publishes', () => {
  it('a "not yet": gave-up, so each waiter asks a node itself; the holder keeps the answer and when its call was sent', async () => {
    const { store, filled } = await holderFill({ answer: answer(404), upstream: 'n', notYet: { sent: 7 } });
    expect(store.published).toEqual(['gave-up']);
    expect(filled).toMatchObject({ answer: { status: 404 }, upstream: 'n', notYet: { sent: 7 } });
  });

  it('any other one-off: the answer itself', async () => {
    const { store } = await holderFill({ answer: answer(500), upstream: 'n' });
    expect(store.published).toEqual([{ answer: answer(500), stored: false }]);
  });
});
