// The gauges of state, read from their sources at scrape time: the memory tier,
// each node's state, version, calls in flight and budget left, the watermark, and
// whether each Redis client is up.
import { Gauge, type Registry } from 'prom-client';
import type { FeedState } from './feed.js';

export interface MetricsSources {
  memoryStats(): { entries: number; bytes: number };
  upstreams(): Array<{ name: string; state: string; ledgerVersion: bigint | null; inFlight: number; headroom: number }>;
  watermarkVersion(): bigint | null;
  /** each Redis client by name, and its state (up, backing_off, down); none without cache.redis */
  redisClients?(): Array<{ client: string; state: string }>;
  /** the change feed, once it exists (absent: reported off) */
  feed?(): FeedState;
}

const UPSTREAM_STATES = ['healthy', 'lagging', 'down', 'quarantined'] as const;

/** A table of gauges, one entry each: longer than a function should be, and read as a table. */
export function registerStateGauges(registers: Registry[], sources: MetricsSources): void {
  new Gauge({
    name: 'ledger_proxy_cache_entries',
    help: 'Entries in the memory tier',
    labelNames: ['tier'],
    registers,
    collect() {
      this.set({ tier: 'memory' }, sources.memoryStats().entries);
    },
  });
  new Gauge({
    name: 'ledger_proxy_cache_bytes',
    help: 'Bytes held by the memory tier (as counted against cache.memory.maxBytes)',
    labelNames: ['tier'],
    registers,
    collect() {
      this.set({ tier: 'memory' }, sources.memoryStats().bytes);
    },
  });
  new Gauge({
    name: 'ledger_proxy_upstream_state',
    help: '1 for the state each node is in (healthy, lagging, down, quarantined); with several workers, the share of workers that see it so',
    labelNames: ['upstream', 'state'],
    registers,
    aggregator: 'average',
    collect() {
      this.reset();
      for (const u of sources.upstreams()) {
        for (const state of UPSTREAM_STATES) this.set({ upstream: u.name, state }, u.state === state ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'ledger_proxy_upstream_ledger_version',
    help: 'Latest ledger version each node reported',
    labelNames: ['upstream'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const u of sources.upstreams())
        if (u.ledgerVersion !== null) this.set({ upstream: u.name }, Number(u.ledgerVersion));
    },
  });
  new Gauge({
    name: 'ledger_proxy_upstream_in_flight',
    help: 'Calls in flight to each node',
    labelNames: ['upstream'],
    registers,
    collect() {
      this.reset();
      for (const u of sources.upstreams()) this.set({ upstream: u.name }, u.inFlight);
    },
  });
  new Gauge({
    name: 'ledger_proxy_node_headroom',
    help: 'Share of each node budget left (upstreams[].maxInFlight, maxRps), 0 to 1; 1 without a budget. A layer in front sheds before the proxy has to',
    labelNames: ['upstream'],
    registers,
    aggregator: 'min',
    collect() {
      this.reset();
      for (const u of sources.upstreams()) this.set({ upstream: u.name }, u.headroom);
    },
  });
  new Gauge({
    name: 'ledger_proxy_redis_up',
    help: '1 while a Redis client is connected and none of its commands failed in the last second (the read path uses it); 0 while it is down or backing off after a failure. By client: cache, fill-channel, limits; with several workers, 0 when any worker sees it so',
    labelNames: ['client'],
    registers,
    aggregator: 'min',
    collect() {
      this.reset();
      for (const r of sources.redisClients?.() ?? []) this.set({ client: r.client }, r.state === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'ledger_proxy_watermark_version',
    help: 'The freshest ledger version the proxy has seen (what cache hits carry)',
    registers,
    aggregator: 'max',
    collect() {
      const v = sources.watermarkVersion();
      if (v !== null) this.set(Number(v));
    },
  });
}
