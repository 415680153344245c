// Request generators for autocannon's setupRequest (run in the load process).
//   distinctLatest: every request a latest raw_item read of a new key (never coalesced, never cached)
//   distinctPinned: every request a pinned raw_item read of a new key (a miss that fills the cache)
//   keyCycle:       pinned raw_item reads cycling through a key list (hits on distinct keys)
//   wallet:         Zipf-ranked items, a share pinned at one version and the rest latest,
//                   spread over raw_item (BCS), view JSON->JSON and view BCS->BCS
//   walletWrites:   the same over a sparse sim's universe of accounts and table keys, which
//                   its ledger writes now and then: an account, its coin store, a table item
//                   (raw_item), and its balance by view JSON and BCS
import { readCode } from './oracle.mjs';
import { prng } from './prng.mjs';
import { account, address, itemKey, rawItem, resource, viewBcs, viewJson } from './requests.mjs';

/** Zipf(s) over ranks 0..n-1: P(rank k) ∝ 1/(k+1)^s. Returns a sampler of ranks. */
export function zipf(n, s, random) {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / Math.pow(k + 1, s);
    cdf[k] = total;
  }
  for (let k = 0; k < n; k++) cdf[k] /= total;
  return () => {
    const u = random();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Which share of requests a Zipf(s) over n ranks sends to the top `top` ranks (for the report). */
export function zipfTopShare(n, s, top) {
  let all = 0;
  let head = 0;
  for (let k = 0; k < n; k++) {
    const w = 1 / Math.pow(k + 1, s);
    all += w;
    if (k < top) head += w;
  }
  return head / all;
}

function apply(req, r) {
  req.method = r.method ?? (r.body === undefined ? 'GET' : 'POST');
  req.path = r.path;
  req.headers = { ...req.headers, ...r.headers };
  req.body = r.body;
  return req;
}

export function makeWorkload(spec) {
  switch (spec.kind) {
    case 'distinctLatest': {
      let next = spec.start ?? 0;
      return (req) => apply(req, rawItem(itemKey(next++), null));
    }
    case 'keyCycle': {
      // pinned raw_item reads cycling through a given key list (all present, all cached)
      let next = 0;
      return (req) => apply(req, rawItem(spec.keys[next++ % spec.keys.length], spec.version));
    }
    case 'distinctPinned': {
      let next = spec.start ?? 0;
      return (req) => apply(req, rawItem(itemKey(next++), spec.version));
    }
    case 'wallet': {
      const random = prng(spec.seed ?? 1);
      const rank = zipf(spec.items, spec.s, random);
      // What was generated, by kind: the report splits node calls into latest and pinned.
      const stats = { pinned: 0, latest: 0, raw_item: 0, view_json: 0, view_bcs: 0 };
      // Every read and its send time, for the oracle (lib/oracle.mjs).
      const trace = { codes: [], times: [] };
      const record = (form, item, version) => {
        trace.codes.push(readCode(form, item, version === null, spec.items));
        trace.times.push(performance.now());
      };
      const setup = (req) => {
        const item = rank();
        const version = random() < spec.pinnedShare ? spec.version : null;
        stats[version === null ? 'latest' : 'pinned']++;
        const form = random();
        if (form < 0.5) {
          stats.raw_item++;
          record(0, item, version);
          return apply(req, rawItem(itemKey(item), version));
        }
        if (form < 0.75) {
          stats.view_json++;
          record(1, item, version);
          return apply(req, viewJson(address(item), version));
        }
        stats.view_bcs++;
        record(2, item, version);
        return apply(req, viewBcs(address(item), version));
      };
      setup.stats = stats;
      setup.trace = trace;
      return setup;
    }
    case 'walletWrites':
      return walletWrites(spec);
    default:
      throw new Error(`unknown workload ${spec.kind}`);
  }
}

/** The share of each form of read in walletWrites, in order (the first three the change feed can answer). */
export const WALLET_WRITES_MIX = { account: 0.25, coin_store: 0.25, raw_item: 0.15, view_json: 0.2, view_bcs: 0.15 };
const FEED_FORMS = new Set(['account', 'coin_store', 'raw_item']);

/**
 * walletWrites: Zipf over the universe's accounts (and a table key of the same rank).
 * With spec.observeCovered, setup.observe (called by the load process with each
 * response, its header names in lower case) keeps [form, rank, ledger version,
 * status, X-Cache] of every covered latest read, for the bench's exact oracle
 * (lib/feed-oracle.mjs).
 */
function walletWrites(spec) {
  const random = prng(spec.seed ?? 1);
  const rank = zipf(spec.accounts.length, spec.s, random);
  const forms = Object.entries(WALLET_WRITES_MIX);
  const stats = { pinned: 0, latest: 0, latestCovered: 0 };
  for (const [form] of forms) stats[form] = 0;
  const observed = [];
  const setup = (req, context) => {
    const item = rank();
    const owner = spec.accounts[item];
    const version = random() < spec.pinnedShare ? spec.version : null;
    stats[version === null ? 'latest' : 'pinned']++;
    let u = random();
    const [form] = forms.find(([, share]) => (u -= share) < 0) ?? forms[forms.length - 1];
    stats[form]++;
    const covered = version === null && FEED_FORMS.has(form);
    if (covered) stats.latestCovered++;
    if (context !== undefined) context.covered = covered ? [form, item] : undefined;
    switch (form) {
      case 'account':
        return apply(req, account(owner, version));
      case 'coin_store':
        return apply(req, resource(owner, version));
      case 'raw_item': {
        const table = spec.tables[item % spec.tables.length];
        const key = Buffer.alloc(8);
        key.writeBigUInt64LE(BigInt(item % spec.tableKeys));
        return apply(req, rawItem(`0x${key.toString('hex')}`, version, table));
      }
      case 'view_json':
        return apply(req, viewJson(owner, version));
      default:
        return apply(req, viewBcs(owner, version));
    }
  };
  setup.stats = stats;
  if (spec.observeCovered)
    setup.observe = (status, context, headers) => {
      if (context.covered === undefined) return;
      // The vendor names the header (X-Aptos-…, X-Node-… from a generic node).
      const name = Object.keys(headers).find((h) => /^x-[a-z]+-ledger-version$/.test(h));
      observed.push([...context.covered, name === undefined ? null : headers[name], status, headers['x-cache']]);
    };
  setup.observed = observed;
  return setup;
}
