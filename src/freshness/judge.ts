// The one question the latest read path asks of the change feed (SPEC-feed rule
// 3): is this stored answer, read at its version, still the latest at L? Yes only
// while the feed is on, covers L, and wrote nothing the answer reads since.
import type { ReadRequest, StoredAnswer } from '../model/read.js';
import { idsReadBy } from './dependencies.js';
import type { WriteIndex } from './write-index.js';

export class FeedJudge {
  /** latest.changeFeed.enabled; live on reload */
  enabled = false;
  /**
   * The ids each stored answer reads, worked out once per answer: an answer object
   * belongs to one canonical request (its key names route, format and identity),
   * and a JSON list's ids come from its body.
   */
  readonly #ids = new WeakMap<StoredAnswer, readonly string[] | null>();

  constructor(private readonly index: WriteIndex) {}

  /** Can the feed judge any answer at `latest` now? When not, nothing need be looked up. */
  covers(latest: bigint): boolean {
    if (!this.enabled) return false;
    const covered = this.index.covered;
    return covered !== null && covered.to >= latest;
  }

  /** Is `answer`, stored for `req` at its version, the answer a node gives at `latest`? */
  unchanged(req: ReadRequest, answer: StoredAnswer, latest: bigint): boolean {
    if (!this.covers(latest)) return false;
    let ids = this.#ids.get(answer);
    if (ids === undefined) {
      const read = req.route.stateRead?.(req, answer) ?? null;
      ids = read === null ? null : idsReadBy(read);
      this.#ids.set(answer, ids);
    }
    return ids !== null && this.index.unchanged(ids, answer.version, latest);
  }
}
