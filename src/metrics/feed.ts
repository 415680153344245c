// The change feed's metrics (SPEC-feed rule 9): whether it is on and covering,
// the last version it verified and how far that is behind the newest version
// known, the pages and bytes it took, the latest reads it answered by route (and
// why the others went to a node), its stops by reason, and the checks of its pages
// by a second node (cache.verify).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FeedForwardReason } from '../model/feed-verdict.js';
import { FEED_PAGE_CHECKS, type FeedPageCheck } from '../upstream/feed-source.js';

/** What the feed is now, read at scrape time. */
export interface FeedState {
  enabled: boolean;
  /** the versions it covers without a gap; null while it covers none */
  covered: { from: bigint; to: bigint } | null;
  /** the newest version known (the watermark) */
  latest: bigint | null;
  /** ids the write index holds: watched ones and the window's */
  index: { watched: number; window: number };
}

/** The reasons the follower itself stops for; a page's codec adds its own at their first event. */
const FOLLOWER_STOP_REASONS = ['pruned', 'chain', 'behind'] as const;

export class FeedMetrics {
  private readonly pages: Counter;
  private readonly bytes: Counter;
  private readonly versions: Counter;
  private readonly delimited: Counter;
  private readonly answers: Counter<'route'>;
  private readonly stops: Counter<'reason'>;
  private readonly forwards: Counter<'route' | 'reason'>;
  private readonly checks: Counter<'outcome'>;

  constructor(registers: Registry[], state: () => FeedState) {
    this.pages = new Counter({
      name: 'ledger_proxy_feed_pages_total',
      help: 'Transaction pages the change feed took',
      registers,
    });
    this.bytes = new Counter({
      name: 'ledger_proxy_feed_bytes_total',
      help: 'Bytes of the transaction pages the change feed took',
      registers,
    });
    this.versions = new Counter({
      name: 'ledger_proxy_feed_versions_total',
      help: 'Versions the change feed decoded and verified',
      registers,
    });
    this.delimited = new Counter({
      name: 'ledger_proxy_feed_delimited_total',
      help: "Versions the change feed verified whose end (or their events' end) it found by hash: they hold a variant this reader does not know, which a newer ledger-proxy walks",
      registers,
    });
    this.answers = new Counter({
      name: 'ledger_proxy_feed_answers_total',
      help: 'Latest reads answered from the cache because the change feed showed nothing they read was written since (X-Cache: HIT), by route',
      labelNames: ['route'],
      registers,
    });
    this.forwards = new Counter({
      name: 'ledger_proxy_feed_forwards_total',
      help: 'Latest reads of a route the change feed covers that went to a node while it is on, by route and reason (written: the stored answer was written since; not_stored: no answer to judge; behind: the feed had not verified the newest version; stopped: it covers nothing; unjudged: the stored answer cannot be judged, neither a 200 nor a 404 that names its version once)',
      labelNames: ['route', 'reason'],
      registers,
    });
    this.stops = new Counter({
      name: 'ledger_proxy_feed_stops_total',
      help: 'Times the change feed stopped covering, by reason (a page that did not decode or verify, a gap, pruned, another chain, behind); latest reads are forwarded until it resumes',
      labelNames: ['reason'],
      registers,
    });
    for (const reason of FOLLOWER_STOP_REASONS) this.stops.inc({ reason }, 0);
    this.checks = new Counter({
      name: 'ledger_proxy_feed_page_checks_total',
      help: "The change feed's pages asked of a second node too (cache.verify), by outcome (agreed: the same bytes, the page taken; disagreed: other bytes, neither taken; unverified: no second node sent the versions, not taken)",
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of FEED_PAGE_CHECKS) this.checks.inc({ outcome }, 0);
    new Gauge({
      name: 'ledger_proxy_feed_enabled',
      help: '1 while latest.changeFeed.enabled is on',
      registers,
      aggregator: 'max',
      collect() {
        this.set(state().enabled ? 1 : 0);
      },
    });
    new Gauge({
      name: 'ledger_proxy_feed_covering',
      help: '1 while the change feed covers a contiguous range of verified versions (it can answer), 0 while it is stopped or off',
      registers,
      aggregator: 'min',
      collect() {
        this.set(state().covered === null ? 0 : 1);
      },
    });
    new Gauge({
      name: 'ledger_proxy_feed_version',
      help: 'The last version the change feed decoded and verified (absent while it covers none)',
      registers,
      aggregator: 'min',
      collect() {
        this.reset();
        const covered = state().covered;
        if (covered !== null) this.set(Number(covered.to));
      },
    });
    new Gauge({
      name: 'ledger_proxy_feed_lag_versions',
      help: 'Versions between the newest version known and the last one the change feed verified (absent while it covers none)',
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        const { covered, latest } = state();
        if (covered !== null && latest !== null) this.set(Math.max(0, Number(latest - covered.to)));
      },
    });
    new Gauge({
      name: 'ledger_proxy_feed_index_ids',
      help: "Ids the change feed's write index holds (part: watched, the dependencies of answers judged; window, the recent versions' writes)",
      labelNames: ['part'],
      registers,
      collect() {
        const { index } = state();
        this.set({ part: 'watched' }, index.watched);
        this.set({ part: 'window' }, index.window);
      },
    });
  }

  /** A page taken: its versions, its bytes, and how many of its versions were delimited by hash. */
  page(versions: number, bytes: number, delimited: number): void {
    this.pages.inc();
    this.bytes.inc(bytes);
    this.versions.inc(versions);
    this.delimited.inc(delimited);
  }

  answer(route: string): void {
    this.answers.labels(route).inc();
  }

  forward(route: string, reason: FeedForwardReason): void {
    this.forwards.labels(route, reason).inc();
  }

  checked(outcome: FeedPageCheck): void {
    this.checks.inc({ outcome });
  }

  stop(reason: string): void {
    this.stops.labels(reason).inc();
  }
}
