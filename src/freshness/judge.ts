// The one question the latest read path asks of the change feed (SPEC-feed rule
// 3): is this stored answer, read at its version, still the latest at L? Yes only
// while the feed is on, covers L, and wrote nothing the answer reads since.
//
// A read may find the feed a page behind L: every node answer moves L, and the
// feed's page for it is on its way. Such a read may wait up to waitMs for the feed
// to cover L (all reads waiting for one version share one wait) rather than ask a
// node itself: the page costs about what its own node call would, once for all. It
// waits only while a page is on its way: a feed that nodes refuse, or one paced by
// intervalMs, is not waited for.
import type { FeedVerdict } from '../model/feed-verdict.js';
import type { ReadRequest, ReplayedAnswer, StoredAnswer } from '../model/read.js';
import { idsReadBy } from './dependencies.js';
import { restatable, restatedAt } from './not-found.js';
import type { WriteIndex } from './write-index.js';

/** The reads waiting for the feed to cover one version. */
interface Wait {
  promise: Promise<void>;
  resolve: () => void;
  timer: NodeJS.Timeout;
}

export class FeedJudge {
  /** latest.changeFeed.enabled; live on reload */
  enabled = false;
  /** latest.changeFeed.waitMs: how long a read waits for the feed to cover the newest version; 0: it does not */
  waitMs = 0;
  /**
   * The ids each stored answer reads, worked out once per answer: an answer object
   * belongs to one canonical request (its key names route, format and identity),
   * and a JSON list's ids come from its body.
   */
  readonly #ids = new WeakMap<StoredAnswer, readonly string[] | null>();
  readonly #waits = new Map<bigint, Wait>();
  /** each restated answer's bytes at the newest version it was answered at, made once per version */
  readonly #restated = new WeakMap<StoredAnswer, { at: bigint; answer: ReplayedAnswer }>();

  constructor(
    private readonly index: WriteIndex,
    /** Is the feed's next page on its way from a node? Only then is it worth waiting for. */
    private readonly paging: () => boolean,
  ) {}

  /** Can the feed judge any answer at `latest` now? When not, nothing need be looked up. */
  covers(latest: bigint): boolean {
    if (!this.enabled) return false;
    const covered = this.index.covered;
    return covered !== null && covered.to >= latest;
  }

  /** Is `answer`, stored for `req` at its version, the answer a node gives at `latest`, and if not, why? */
  verdict(req: ReadRequest, answer: StoredAnswer, latest: bigint): FeedVerdict {
    if (!this.covers(latest)) return this.uncovered();
    const ids = this.#idsOf(req, answer);
    if (ids === null) return 'unjudged';
    return this.index.unchanged(ids, answer.version, latest) ? 'unchanged' : 'written';
  }

  /** Why the feed does not cover the newest version: it covers nothing, or not that far yet. */
  uncovered(): 'stopped' | 'behind' {
    return this.enabled && this.index.covered !== null ? 'behind' : 'stopped';
  }

  /**
   * The verdict on `answer` as far as the feed has verified: unchanged when nothing
   * it reads was written up to there (or the answer is newer), so it may still be
   * judged unchanged once the feed covers more.
   */
  verdictSoFar(req: ReadRequest, answer: StoredAnswer): FeedVerdict {
    const covered = this.enabled ? this.index.covered : null;
    if (covered === null) return 'stopped';
    const ids = this.#idsOf(req, answer);
    if (ids === null) return 'unjudged';
    return answer.version >= covered.to || this.index.unchanged(ids, answer.version, covered.to)
      ? 'unchanged'
      : 'written';
  }

  /**
   * Settles once the feed covers `latest`, stops, or waitMs passes; undefined when
   * no read should wait (the feed is off or stopped, no page is on its way, or
   * waitMs is 0).
   */
  whenCovers(latest: bigint): Promise<void> | undefined {
    if (!this.enabled || this.waitMs === 0 || this.index.covered === null) return undefined;
    if (!this.#waits.has(latest) && !this.paging()) return undefined;
    let wait = this.#waits.get(latest);
    if (wait === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      const timer = setTimeout(() => this.#settle(latest), this.waitMs);
      timer.unref();
      wait = { promise, resolve, timer };
      this.#waits.set(latest, wait);
    }
    return wait.promise;
  }

  /** Told whenever what the feed covers changes: the waits it now covers, or all on a stop, are over. */
  coverageChanged(): void {
    const covered = this.index.covered;
    for (const version of this.#waits.keys()) if (covered === null || covered.to >= version) this.#settle(version);
  }

  #settle(version: bigint): void {
    const wait = this.#waits.get(version);
    if (wait === undefined) return;
    this.#waits.delete(version);
    clearTimeout(wait.timer);
    wait.resolve();
  }

  /** The bytes a node answers at `latest` for `answer` judged unchanged there (a 404 names the version it read at). */
  answerAt(answer: StoredAnswer, latest: bigint): ReplayedAnswer {
    if (answer.status === 200) return answer;
    const last = this.#restated.get(answer);
    if (last?.at === latest) return last.answer;
    const restated = restatedAt(answer, latest);
    this.#restated.set(answer, { at: latest, answer: restated });
    return restated;
  }

  #idsOf(req: ReadRequest, answer: StoredAnswer): readonly string[] | null {
    let ids = this.#ids.get(answer);
    if (ids === undefined) {
      const read = restatable(answer) ? (req.route.stateRead?.(req, answer) ?? null) : null;
      ids = read === null ? null : idsReadBy(read);
      this.#ids.set(answer, ids);
    }
    return ids;
  }
}
