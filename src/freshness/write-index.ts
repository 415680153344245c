// What the change feed proves (SPEC-feed rule 3): over the contiguous range of
// versions it has decoded and verified, the last version at which each dependency
// (dependencies.ts) was written. An answer read at version A is still the latest
// at L when the feed covers every version in (A, L] and none of them wrote any
// dependency of the answer. Anything not known for certain is a no: the read is
// then forwarded.
//
// Two structures, both bounded:
// - the window: every id written in the newest `windowVersions` versions, with
//   its last write. It judges an answer read at a version the feed had already
//   passed when the answer was stored (a lagging node's answer, another
//   instance's entry in Redis).
// - the watches: ids that answers were judged by, each with the last write since
//   the watch began, kept past the window so a key read often and written rarely
//   stays answerable however old its answer is. Least recently judged first out.
import { LRUCache } from 'lru-cache';
import { idsWrittenBy, type VersionWrites } from './dependencies.js';

export interface WriteIndexSettings {
  /** versions whose writes the window keeps */
  windowVersions: number;
  /** ids the window holds at most: past it the oldest versions leave first */
  maxWindowWrites: number;
  /** ids watched at most */
  maxWatched: number;
}

/** An id's writes known since `since`: `last` is the newest after it, null when none. */
interface Watch {
  since: bigint;
  last: bigint | null;
}

/** The ids one version wrote, kept until the version leaves the window. */
interface WindowVersion {
  version: bigint;
  ids: string[];
}

export class WriteIndex {
  /** the first version covered; null while nothing is (never started, or stopped) */
  #from: bigint | null = null;
  /** the last version covered */
  #to = -1n;
  /** every write in (windowStart, to] is in #recent */
  #windowStart = -1n;
  readonly #recent = new Map<string, bigint>();
  /** the window's versions, oldest first, from #head on (a queue without shifting) */
  #versions: WindowVersion[] = [];
  #head = 0;
  #windowWrites = 0;
  #watched: LRUCache<string, Watch>;
  #settings: WriteIndexSettings;

  constructor(settings: WriteIndexSettings) {
    this.#settings = settings;
    this.#watched = new LRUCache({ max: Math.max(1, settings.maxWatched) });
  }

  get settings(): WriteIndexSettings {
    return this.#settings;
  }

  /** New bounds: everything known is dropped, and nothing is covered until the next restart. */
  reconfigure(settings: WriteIndexSettings): void {
    this.stop();
    this.#settings = settings;
    this.#watched = new LRUCache({ max: Math.max(1, settings.maxWatched) });
  }

  /** The range of versions covered, or null while none is. */
  get covered(): { from: bigint; to: bigint } | null {
    return this.#from === null ? null : { from: this.#from, to: this.#to };
  }

  /** Ids watched now, and ids in the window: what the index holds. */
  get size(): { watched: number; window: number } {
    return { watched: this.#watched.size, window: this.#recent.size };
  }

  /**
   * Covers afresh from `start`: nothing written before it is known, so answers read
   * before start − 1 are never judged unchanged (SPEC-feed rule 4).
   */
  restart(start: bigint): void {
    this.#forget();
    this.#from = start;
    this.#to = start - 1n;
    this.#windowStart = start - 1n;
  }

  /** Covers nothing until the next restart. */
  stop(): void {
    this.#forget();
    this.#from = null;
  }

  /**
   * Takes verified versions in order, the first the one after the last covered.
   * Anything else is the caller's bug, and stops the index rather than leave a gap.
   */
  apply(versions: readonly VersionWrites[]): void {
    for (const { version, writes } of versions) {
      if (this.#from === null || version !== this.#to + 1n) {
        this.stop();
        throw new RangeError(`write index: version ${version} does not follow ${this.#to}`);
      }
      const ids: string[] = [];
      for (const write of writes) for (const id of idsWrittenBy(write)) ids.push(id);
      for (const id of ids) {
        this.#recent.set(id, version);
        const watch = this.#watched.peek(id);
        if (watch !== undefined) watch.last = version;
      }
      this.#versions.push({ version, ids });
      this.#windowWrites += ids.length;
      this.#to = version;
    }
    this.#trim();
  }

  /**
   * Is an answer read at `at`, depending on `ids`, still the latest at `latest`?
   * Only when the index covers every version in (at, latest] and none wrote an id.
   */
  unchanged(ids: readonly string[], at: bigint, latest: bigint): boolean {
    if (this.#from === null || at > latest || latest > this.#to || at < this.#from - 1n) return false;
    for (const id of ids) {
      let watch = this.#watched.get(id);
      if (watch === undefined || watch.since > at) {
        // Not watched from early enough: the window knows, if it reaches back to at.
        if (at < this.#windowStart) return false;
        watch = { since: this.#windowStart, last: this.#recent.get(id) ?? null };
        this.#watched.set(id, watch);
      }
      if (watch.last !== null && watch.last > at) return false;
    }
    return true;
  }

  /** Drops the oldest versions from the window while it holds more than its bounds. */
  #trim(): void {
    const { windowVersions, maxWindowWrites } = this.#settings;
    while (
      this.#head < this.#versions.length &&
      (this.#versions.length - this.#head > windowVersions || this.#windowWrites > maxWindowWrites)
    ) {
      const oldest = this.#versions[this.#head++]!;
      for (const id of oldest.ids) if (this.#recent.get(id) === oldest.version) this.#recent.delete(id);
      this.#windowWrites -= oldest.ids.length;
      this.#windowStart = oldest.version;
    }
    // Compact now and then, so the queue's array does not grow without bound.
    if (this.#head > 1024 && this.#head * 2 > this.#versions.length) {
      this.#versions = this.#versions.slice(this.#head);
      this.#head = 0;
    }
  }

  #forget(): void {
    this.#recent.clear();
    this.#versions = [];
    this.#head = 0;
    this.#windowWrites = 0;
    this.#watched.clear();
  }
}
