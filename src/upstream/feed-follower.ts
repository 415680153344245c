// The change feed followed from the nodes (SPEC-feed rules 4, 8): pages of
// `GET /v1/transactions?start&limit` in BCS, asked of a healthy node of the chain
// that has the page's first version (UpstreamPool.feedPage), decoded and verified
// (the codec is handed in), and passed on in order to the sink, which learns the
// versions covered without a gap. A page is asked as soon as the freshest ledger
// version known (the watermark, moved by every node answer and probe) is past the
// last version covered, one page at a time, no sooner than `intervalMs` after the
// last. A page refused by the codec gives up the versions it verified before the
// fault, each by its own hashes, and the next page starts at the fault; one refused
// at its first version is asked again at half the size. Anything that breaks the
// chain of verified versions (one version that does not decode or verify alone, a
// gap, a pruned start, another chain, falling too far behind) stops the sink, and
// the feed resumes from the newest version a moment later: answers read before it
// are not judged again until a node refreshes them.
import type { Logger } from 'pino';
import { NodeError } from '../errors.js';
import type { LedgerInfo } from '../ledger/info.js';
import type { Watermark } from '../ledger/watermark.js';
import type { NodeAnswer } from '../model/node-answer.js';
import { asError } from '../process/log-error.js';
import { type FeedVersion, nextPageLimit } from './feed-page-size.js';

/** Why the feed stopped covering: a codec's reason for a page it refused, or one of these. */
export type FeedStopReason = 'pruned' | 'chain' | 'behind' | (string & {});

export interface FeedFollowerSettings {
  /** versions asked per page (a node clamps it to its own page size) */
  pageSize: number;
  /** the least time between two pages while the feed is at the newest version */
  intervalMs: number;
  /** beyond this many versions behind the newest, the feed starts afresh from it */
  maxLagVersions: number;
  /** after a stop, or a page no node answered, the wait before the next try */
  retryMs: number;
}

/** The nodes, as the follower asks them (UpstreamPool). */
export interface FeedSource {
  feedPage(start: bigint, limit: number): Promise<NodeAnswer>;
  /** the chain the nodes are on; undefined while not known */
  chainId(): number | undefined;
}

/** Where verified versions go (the write index). */
export interface FeedSink<V extends FeedVersion> {
  restart(start: bigint): void;
  stop(): void;
  apply(versions: readonly V[]): void;
}

/** A page the codec refused, with its stable reason, and the versions it verified before the fault. */
interface FeedPageFault<V> {
  reason: string;
  version?: bigint;
  verifiedPrefix?: readonly V[];
}

export interface FeedFollowerDeps<V extends FeedVersion> {
  source: FeedSource;
  /** bcs(Vec<TransactionOnChainData>) from `start` → its versions, each verified; throws a FeedPageFault-shaped error */
  decode(body: Buffer, start: bigint): readonly V[];
  sink: FeedSink<V>;
  watermark: Watermark;
  logger: Logger;
  settings: FeedFollowerSettings;
  /** told of every page taken: its versions and its bytes */
  onPage?(versions: readonly V[], bytes: number): void;
  /** told of every stop, by reason */
  onStop?(reason: FeedStopReason): void;
}

const isFault = <V>(err: unknown): err is FeedPageFault<V> =>
  typeof err === 'object' && err !== null && typeof (err as { reason?: unknown }).reason === 'string';

export class FeedFollower<V extends FeedVersion> {
  #settings: FeedFollowerSettings;
  #running = false;
  /** the next version to ask for; null while the feed covers nothing */
  #next: bigint | null = null;
  #chain: number | undefined;
  #lastPageAt = 0;
  /** the last refusal logged at warn, until a page is taken */
  #lastRefusal: string | undefined;
  #wake: (() => void) | undefined;
  #paging = false;
  #loop: Promise<void> | undefined;
  /**
   * Versions per page now: halved after a page refused at its first version (a page of many
   * transactions the reader cannot walk spends its search budget); after one taken, as
   * feed-page-size.ts says.
   */
  #limit: number;

  constructor(private readonly deps: FeedFollowerDeps<V>) {
    this.#settings = deps.settings;
    this.#limit = deps.settings.pageSize;
    deps.watermark.onAdvance(() => this.#wake?.());
  }

  /** The next version the feed will ask for (covered up to the one before); null while it covers nothing. */
  get next(): bigint | null {
    return this.#next;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Is a page on its way from a node now? */
  get paging(): boolean {
    return this.#paging;
  }

  /** Starts following from the newest version known; a no-op while running. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#follow().catch((err) => {
      // Covers nothing from now on; a reload that turns the feed off and on starts it again.
      this.#running = false;
      this.#halt();
      this.deps.logger.error({ err: asError(err) }, 'change feed: follower failed; latest reads are forwarded');
    });
  }

  /** Stops following; the sink covers nothing from now on. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    this.#halt();
    this.deps.logger.info('change feed: stopped (latest.changeFeed.enabled is off)');
  }

  /** New settings (a reload): taken at the next page. */
  configure(settings: FeedFollowerSettings): void {
    this.#settings = settings;
    this.#limit = settings.pageSize;
  }

  async #follow(): Promise<void> {
    while (this.#running) {
      const latest = this.deps.watermark.current();
      const chain = this.deps.source.chainId();
      if (latest === null || chain === undefined || latest.chainId !== chain) {
        // No chain to follow (yet, or the nodes left it): nothing is covered meanwhile.
        if (this.#next !== null) await this.#stopCovering('chain');
        else await this.#sleep(this.#settings.retryMs);
        continue;
      }
      if (this.#next === null || this.#chain !== chain) this.#resume(latest);
      const next = this.#next!;
      if (latest.ledgerVersion - next + 1n > BigInt(this.#settings.maxLagVersions)) {
        await this.#stopCovering('behind');
        continue;
      }
      if (next > latest.ledgerVersion) {
        await this.#sleep(undefined);
        continue;
      }
      const wait = this.#lastPageAt + this.#settings.intervalMs - Date.now();
      if (wait > 0) {
        await this.#sleep(wait);
        continue;
      }
      this.#lastPageAt = Date.now();
      await this.#page(next, chain);
    }
  }

  /** Asks for one page from `start`, and takes what it holds. */
  async #page(start: bigint, chain: number): Promise<void> {
    let answer: NodeAnswer;
    const limit = Math.min(this.#limit, this.#settings.pageSize);
    this.#paging = true;
    try {
      answer = await this.deps.source.feedPage(start, limit);
    } catch (err) {
      this.#paging = false;
      // Every node that could serve the start has pruned it (their headers say so).
      if (err instanceof NodeError && err.code === 'version_pruned')
        return this.#stopCovering('pruned', { version: String(start) });
      // No node answered: nothing covered is wrong, the feed just does not move.
      this.deps.logger.debug({ err: asError(err), start: String(start) }, 'change feed: no page this time');
      await this.#sleep(this.#settings.retryMs);
      return;
    }
    this.#paging = false;
    if (!this.#running || this.#next !== start) return;
    if (answer.ledger !== null && answer.ledger.chainId !== chain) return this.#stopCovering('chain');
    if (answer.status !== 200) return this.#refused(answer, start);
    let versions: readonly V[];
    try {
      versions = this.deps.decode(answer.body, start);
    } catch (err) {
      if (!isFault<V>(err)) throw err;
      return this.#refusedPage(err, start, limit, answer);
    }
    if (versions.length === 0) {
      // A node that has the start answers it: an empty page from one is a gap.
      if (answer.ledger !== null && answer.ledger.ledgerVersion >= start)
        return this.#refusedPage({ reason: 'not_contiguous', version: start }, start, limit, answer);
      await this.#sleep(this.#settings.retryMs);
      return;
    }
    this.#take(versions, answer.body.length);
    this.#limit = nextPageLimit(limit, this.#settings.pageSize, versions, answer.body.length);
  }

  /** A page the codec refused: the versions verified before the fault are taken, or it is asked again smaller, or the feed stops. */
  async #refusedPage(fault: FeedPageFault<V>, start: bigint, limit: number, answer: NodeAnswer): Promise<void> {
    // The versions before the fault are each verified by their own hashes: a smaller page would have held them.
    const prefix = fault.verifiedPrefix ?? [];
    if (prefix.length > 0) {
      this.#take(prefix, answer.body.length);
      return;
    }
    if (limit > 1) {
      this.#limit = Math.ceil(limit / 2);
      this.deps.logger.debug(
        { reason: fault.reason, start: String(start), limit: this.#limit },
        'change feed: a page refused at its first version; asked again, smaller',
      );
      return;
    }
    return this.#stopCovering(fault.reason, { upstream: answer.upstream, version: String(fault.version ?? start) });
  }

  /** Verified versions from the next one on: into the sink, and the feed moves past them. */
  #take(versions: readonly V[], bytes: number): void {
    this.deps.sink.apply(versions);
    this.#lastRefusal = undefined;
    this.#next = versions[versions.length - 1]!.version + 1n;
    this.deps.onPage?.(versions, bytes);
  }

  /** A node's error answer for a page: not there yet, or pruned (then start afresh). */
  async #refused(answer: NodeAnswer, start: bigint): Promise<void> {
    // Older nodes answer 500 internal_error for a start below their oldest version.
    const pruned = answer.status === 410 || (answer.status === 500 && answer.errorCode === 'internal_error');
    if (pruned) return this.#stopCovering('pruned', { upstream: answer.upstream, version: String(start) });
    // A node that does not serve the feed at all (403 with BCS output off) is said once, not every try.
    const refusal = `${answer.upstream} ${answer.status} ${answer.errorCode ?? ''}`;
    const level = refusal === this.#lastRefusal ? 'debug' : 'warn';
    this.#lastRefusal = refusal;
    this.deps.logger[level](
      { upstream: answer.upstream, status: answer.status, code: answer.errorCode, start: String(start) },
      'change feed: a node refused the page; latest reads are forwarded until one is served',
    );
    await this.#sleep(this.#settings.retryMs);
  }

  /** Covers afresh from the version after the newest known. */
  #resume(latest: LedgerInfo): void {
    const start = latest.ledgerVersion + 1n;
    this.#next = start;
    this.#chain = latest.chainId;
    this.deps.sink.restart(start);
    this.deps.logger.info(
      { start: String(start), chainId: latest.chainId },
      'change feed: following; latest answers read at or after the version before start can be judged',
    );
  }

  /** Stops covering for `reason`; the loop resumes from the newest version after retryMs. */
  async #stopCovering(reason: FeedStopReason, detail: Record<string, string> = {}): Promise<void> {
    this.#halt();
    this.deps.onStop?.(reason);
    this.deps.logger.warn(
      { reason, ...detail, retryMs: this.#settings.retryMs },
      'change feed: stopped; latest reads are forwarded until it resumes',
    );
    await this.#sleep(this.#settings.retryMs);
  }

  #halt(): void {
    this.#next = null;
    this.#chain = undefined;
    this.deps.sink.stop();
  }

  /** Until `ms` pass (undefined: until the watermark moves), or stop() is called. */
  #sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      // Each sleep ends its own timer and wake only: a late one never takes a newer sleep's.
      const done = (): void => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      this.#wake = done;
      if (ms !== undefined) {
        timer = setTimeout(done, ms);
        timer.unref();
      }
    });
  }
}
