// The judge's wait: a read that finds the feed a page behind waits for that page
// only while one is on its way, shares the wait with every read for the same
// version, and goes on once the feed covers it, stops, or waitMs passes.
import { describe, expect, it } from 'vitest';
import { FeedJudge } from '../../src/freshness/judge.js';
import { WriteIndex } from '../../src/freshness/write-index.js';
import { within } from '../helpers/until.js';

function judging(paging: boolean, waitMs = 60_000) {
  const index = new WriteIndex({ windowVersions: 100, maxWindowWrites: 1000, maxWatched: 100 });
  const state = { paging };
  const judge = new FeedJudge(index, () => state.paging);
  judge.enabled = true;
  judge.waitMs = waitMs;
  index.restart(11n);
  return { index, judge, state };
}

describe('waiting for the feed', () => {
  it('waits only while a page is on its way, and only while the feed is on and covering', () => {
    const { judge, state, index } = judging(false);
    expect(judge.whenCovers(12n)).toBeUndefined();
    state.paging = true;
    expect(judge.whenCovers(12n)).toBeInstanceOf(Promise);
    judge.waitMs = 0;
    expect(judge.whenCovers(13n)).toBeUndefined();
    judge.waitMs = 1000;
    judge.enabled = false;
    expect(judge.whenCovers(13n)).toBeUndefined();
    judge.enabled = true;
    index.stop();
    expect(judge.whenCovers(13n)).toBeUndefined();
  });

  it('one wait per version, over once the feed covers it', async () => {
    const { judge, index } = judging(true);
    const first = judge.whenCovers(12n)!;
    const second = judge.whenCovers(12n)!;
    expect(second).toBe(first);
    const later = judge.whenCovers(13n)!;
    index.apply([
      { version: 11n, writes: [] },
      { version: 12n, writes: [] },
    ]);
    judge.coverageChanged();
    await within(first, 1000, 'the wait for 12');
    let laterOver = false;
    void later.then(() => {
      laterOver = true;
    });
    await Promise.resolve();
    expect(laterOver).toBe(false);
    index.stop();
    judge.coverageChanged();
    await within(later, 1000, 'the wait for 13, over with the stop');
  });

  it('is over after waitMs, whatever the feed does', async () => {
    const { judge } = judging(true, 20);
    await within(judge.whenCovers(50n)!, 1000, 'the wait to time out');
  });
});
