// The differential run: a seeded stream of reads of every
// cached route family (raw_item, view, accounts, tables, transactions, blocks) —
// pinned and latest, JSON and BCS request bodies for view, JSON and BCS answers,
// present and absent items, versions inside the window, at its edge, pruned and
// not reached yet — sent through the proxy and straight to the sim, while the
// sim's ledger advances and prunes. Every proxy answer must be the sim's answer to
// the same request at the same version; the few ways they may differ because the
// two are asked at different moments are named below, counted and reported.
import { Pool } from 'undici';
import {
  SIM_MODULE_ADDRESS,
  simAccountExists,
  simTableItem,
  simTransactionHash,
  type SimNode,
} from '../../src/sim/index.js';
import type { TypeTag } from '../../src/wire/move-type.js';
import { encodeViewRequest } from '../../src/wire/view-bcs.js';
import {
  errorCodeOf,
  header,
  parseErrorBody,
  sameAnswer,
  shapeProblem,
  type ReplyLike,
} from '../helpers/fuzz-reply.js';
import { Rng } from '../helpers/fuzz-stack.js';
import { u64le } from '../helpers/bytes.js';

export const HANDLE = '0x' + 'ab'.repeat(32);
const HANDLE_FORMS = [HANDLE, '0x' + 'AB'.repeat(32), 'ab'.repeat(32)];
const HANDLE2_FORMS = ['0x1', '0x01', '0x' + '1'.padStart(64, '0')];
const CANDIDATES = Array.from({ length: 200 }, (_, i) => Buffer.from([i, 0x5a]));
const PRESENT = CANDIDATES.filter((k) => simTableItem(HANDLE, k, 0n) !== null).slice(0, 6);
const ABSENT = CANDIDATES.filter((k) => simTableItem(HANDLE, k, 0n) === null).slice(0, 3);
const OWNERS = ['0x' + 'cd'.repeat(32), '0xCD', 'cd'.repeat(32), '0x1'];

/** Where a pinned version sits relative to the sim's ledger when the request is sent. */
type At =
  | { kind: 'latest' }
  | { kind: 'window'; back: number }
  | { kind: 'hot'; slot: number }
  | { kind: 'edge'; offset: number }
  | { kind: 'pruned'; below: number }
  | { kind: 'future'; ahead: number }
  | { kind: 'u64max' };

interface Request {
  /** the route family, for the report */
  endpoint: 'raw_item' | 'view' | 'accounts' | 'tables' | 'transactions' | 'blocks';
  method: 'GET' | 'POST';
  /** the path with the route's own query, if any; the version is added when the request is sent */
  path: string;
  headers: Record<string, string>;
  /** empty for a GET */
  body: Buffer;
  at: At;
  /**
   * A transaction or block: its path names an item by the version `at` resolves
   * to when it is sent (no ledger_version); `item` builds that path.
   */
  item?: PathItem;
  /** what leads the version text: '', zeros, or a '+' (%2B) and zeros (the same version, api.md §2) */
  spelling: string;
  label: string;
}

/** What a transaction or block path names, given the version `at` resolved to. */
interface PathItem {
  kind: 'txn_by_version' | 'txn_by_hash' | 'block_by_height' | 'block_by_version';
  /** the path for version v (the block containing v, the transaction at v) */
  path(v: bigint): string;
}

/** The version range of the block that contains v (the sim's blocks: 4 versions each). */
const blockOf = (v: bigint): { first: bigint; last: bigint } => ({ first: (v / 4n) * 4n, last: (v / 4n) * 4n + 3n });

/** Whether the item at v is there in a ledger (`latest`, `oldest`): present, not yet, or pruned. */
function itemState(item: PathItem, v: bigint, latest: bigint, oldest: bigint): 'present' | 'not yet' | 'pruned' {
  const block = blockOf(v);
  switch (item.kind) {
    case 'txn_by_version':
    case 'txn_by_hash':
      return v > latest ? 'not yet' : v < oldest ? 'pruned' : 'present';
    case 'block_by_height':
      // block_pruned below the oldest block height (oldest / 4), not found until complete.
      return v / 4n < oldest / 4n ? 'pruned' : block.last > latest ? 'not yet' : 'present';
    case 'block_by_version':
      return v > latest || block.last > latest ? 'not yet' : v < oldest ? 'pruned' : 'present';
  }
}

const JSON_TYPE = 'application/json';
const BCS_VIEW_TYPE = 'application/x.node.view_function+bcs';

/** A JSON view body in one of several spellings of the same request (member order, whitespace). */
function viewJsonText(rng: Rng, call: { function: string; type_arguments: string[]; arguments: unknown[] }): string {
  switch (rng.int(0, 3)) {
    case 0:
      return JSON.stringify(call);
    case 1:
      return JSON.stringify({
        arguments: call.arguments,
        function: call.function,
        type_arguments: call.type_arguments,
      });
    case 2:
      return JSON.stringify(call, null, 2);
    default:
      return ` { "function" : ${JSON.stringify(call.function)} ,\n "type_arguments": ${JSON.stringify(call.type_arguments)}, "arguments":${JSON.stringify(call.arguments)} } `;
  }
}

function viewJsonCall(rng: Rng): {
  call: { function: string; type_arguments: string[]; arguments: unknown[] };
  label: string;
} {
  const n = (): string => String(rng.int(0, 50));
  switch (rng.int(0, 9)) {
    case 0:
    case 1:
    case 2:
      return {
        call: {
          function: rng.pick(['0x1::sim::balance', '0x01::sim::balance']),
          type_arguments: [],
          arguments: [rng.pick(OWNERS)],
        },
        label: 'view balance',
      };
    case 3:
      return {
        call: {
          function: '0x1::sim::add',
          type_arguments: [],
          arguments: [n(), rng.chance(0.5) ? n() : rng.int(0, 50)],
        },
        label: 'view add',
      };
    case 4:
      return { call: { function: '0x1::sim::pair', type_arguments: [], arguments: [n()] }, label: 'view pair' };
    case 5:
      return {
        call: {
          function: '0x1::sim::type_name',
          type_arguments: [
            rng.pick(['u8', 'vector<u8>', '0x1::string::String', '0x1::coin::Coin<0x1::aptos_coin::AptosCoin>']),
          ],
          arguments: [],
        },
        label: 'view type_name',
      };
    case 6:
      return { call: { function: '0x1::sim::always_abort', type_arguments: [], arguments: [] }, label: 'view abort' };
    case 7:
      return {
        call: { function: '0x1::sim::burn', type_arguments: [], arguments: [rng.pick(['5', '2000000'])] },
        label: 'view burn',
      };
    case 8:
      return {
        call: {
          function: rng.pick(['0x1::sim::nope', '0x1::sim::poke', '0x2::sim::balance']),
          type_arguments: [],
          arguments: [],
        },
        label: 'view unknown',
      };
    default:
      return { call: { function: '0x1::sim::add', type_arguments: [], arguments: [n()] }, label: 'view arity' };
  }
}

/** The label of BCS view bodies that do not decode: the proxy answers them itself, after the version checks. */
const UNDECODABLE = 'view-bcs undecodable';

function viewBcsBody(rng: Rng): { body: Buffer; label: string } {
  const call = (fn: string, args: Uint8Array[], typeArgs: TypeTag[] = []): Buffer =>
    Buffer.from(encodeViewRequest({ address: SIM_MODULE_ADDRESS, module: 'sim', function: fn, typeArgs, args }));
  switch (rng.int(0, 6)) {
    case 6: {
      // Cut short inside its arguments, or with a byte left over.
      const whole = call('add', [u64le(BigInt(rng.int(0, 50))), u64le(BigInt(rng.int(0, 50)))]);
      return {
        body: rng.chance(0.5)
          ? whole.subarray(0, whole.length - rng.int(1, 8))
          : Buffer.concat([whole, Buffer.from([0])]),
        label: UNDECODABLE,
      };
    }
    case 0:
    case 1:
      return { body: call('balance', [Buffer.alloc(32, rng.pick([0xcd, 0xce]))]), label: 'view-bcs balance' };
    case 2:
      return {
        body: call('add', [u64le(BigInt(rng.int(0, 50))), u64le(BigInt(rng.int(0, 50)))]),
        label: 'view-bcs add',
      };
    case 3:
      return { body: call('pair', [u64le(BigInt(rng.int(0, 50)))]), label: 'view-bcs pair' };
    case 4:
      return { body: call('type_name', [], [{ kind: 'vector', of: { kind: 'u64' } }]), label: 'view-bcs type_name' };
    default:
      return { body: call('always_abort', []), label: 'view-bcs abort' };
  }
}

function pickAt(rng: Rng): At {
  const r = rng.next();
  if (r < 0.2) return { kind: 'latest' };
  // Just below the latest: versions asked as 'future' a moment ago, now reached.
  if (r < 0.3) return { kind: 'window', back: rng.int(0, 8) };
  if (r < 0.5) return { kind: 'hot', slot: rng.int(0, 2) };
  if (r < 0.7) return { kind: 'window', back: rng.int(0, 190) };
  if (r < 0.83) return { kind: 'edge', offset: rng.int(-4, 4) };
  if (r < 0.91) return { kind: 'pruned', below: rng.int(1, 400) };
  if (r < 0.99) return { kind: 'future', ahead: rng.int(1, 6) };
  return { kind: 'u64max' };
}

const STRUCT_TAGS = [
  '0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>',
  '0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E',
  `0x1::coin::CoinStore%3C0x${'0'.repeat(63)}1::aptos_coin::AptosCoin%3E`,
  '0x1::account::Account',
  '0x1::sim::Slot3',
  '0x1::sim::Nope',
];
// An account the sim does not have (sha256(address)[0] % 8 === 0 is missing): found once, below.
const ACCOUNT_FORMS = ['0x1', '0x01', '0x' + '1'.padStart(64, '0'), '0x' + 'cd'.repeat(32), 'cd'.repeat(32)];
const ACCEPTS = ['application/json', 'application/x-bcs', undefined];

function acceptHeader(rng: Rng): Record<string, string> {
  const accept = rng.pick(ACCEPTS);
  return accept === undefined ? {} : { accept };
}

/** An account route: pinned by ledger_version (added when sent), JSON or BCS. */
function accountRequest(rng: Rng, at: At, spelling: string, missing: string): Request {
  const who = rng.chance(0.85) ? rng.pick(ACCOUNT_FORMS) : missing;
  const get = (path: string, label: string): Request => ({
    endpoint: 'accounts',
    method: 'GET',
    path,
    headers: acceptHeader(rng),
    body: Buffer.alloc(0),
    at,
    spelling,
    label,
  });
  switch (rng.int(0, 5)) {
    case 0:
      return get(`/v1/accounts/${who}`, 'account');
    case 1:
      return get(
        `/v1/accounts/${who}/resources${rng.pick(['', '?limit=2', '?limit=3', '?limit=0', '?x=1'])}`,
        'resources',
      );
    case 2:
      return get(`/v1/accounts/${who}/resource/${rng.pick(STRUCT_TAGS)}`, 'resource');
    case 3:
      return get(`/v1/accounts/${who}/modules${rng.pick(['', '?limit=1', '?limit=2'])}`, 'modules');
    case 4:
      return get(`/v1/accounts/${who}/module/${rng.pick(['sim', 'coin', 'nope'])}`, 'module');
    default:
      return get(`/v1/accounts/${who}/balance/${rng.pick(['0x1::aptos_coin::AptosCoin', '0xa'])}`, 'balance');
  }
}

/** A table item by JSON key, or a state value by its BCS StateKey (BCS only). */
function tableRequest(rng: Rng, at: At, spelling: string): Request {
  const n = rng.int(0, 40);
  if (rng.chance(0.7)) {
    const key = rng.pick([String(n), n]);
    const body = JSON.stringify(
      rng.chance(0.5) ? { key_type: 'u64', value_type: 'u64', key } : { value_type: 'u64', key, key_type: 'u64' },
    );
    return {
      endpoint: 'tables',
      method: 'POST',
      path: `/v1/tables/${rng.pick(HANDLE_FORMS)}/item`,
      headers: { 'content-type': JSON_TYPE, ...acceptHeader(rng) },
      body: Buffer.from(body),
      at,
      spelling,
      label: 'table item',
    };
  }
  // StateKey::TableItem { handle, key }: variant 1, the 32-byte handle, then the key as bytes.
  const stateKey = Buffer.concat([
    Buffer.from([1]),
    Buffer.from(HANDLE.slice(2), 'hex'),
    Buffer.from([8]),
    u64le(BigInt(n)),
  ]);
  const key = rng.chance(0.9) ? '0x' + stateKey.toString('hex') : '0x02ff';
  const accept = rng.chance(0.9) ? 'application/x-bcs' : 'application/json';
  return {
    endpoint: 'tables',
    method: 'POST',
    path: '/v1/experimental/state_values/raw',
    headers: { 'content-type': JSON_TYPE, accept },
    body: Buffer.from(JSON.stringify({ key })),
    at,
    spelling,
    label: 'state value',
  };
}

/** A transaction or block named by its path: the version `at` resolves to picks the item. */
function historyRequest(rng: Rng, at: At, chainId: number): Request {
  const withTxns = rng.pick(['', '?with_transactions=true', '?with_transactions=false']);
  const items: PathItem[] = [
    { kind: 'txn_by_version', path: (v) => `/v1/transactions/by_version/${v}` },
    { kind: 'txn_by_hash', path: (v) => `/v1/transactions/by_hash/${simTransactionHash(chainId, v)}` },
    { kind: 'block_by_height', path: (v) => `/v1/blocks/by_height/${v / 4n}${withTxns}` },
    { kind: 'block_by_version', path: (v) => `/v1/blocks/by_version/${v}${withTxns}` },
  ];
  const item = rng.pick(items);
  const endpoint = item.kind.startsWith('txn') ? 'transactions' : 'blocks';
  return {
    endpoint,
    method: 'GET',
    path: '',
    headers: acceptHeader(rng),
    body: Buffer.alloc(0),
    at,
    spelling: '',
    label: item.kind,
    item,
  };
}

/** A missing account of the sim's (one in eight addresses): the first of a fixed list. */
function missingAccount(exists: (address: string) => boolean): string {
  for (let i = 2; ; i++) {
    const address = '0x' + i.toString(16).padStart(64, '0');
    if (!exists(address)) return address;
  }
}

/** The i-th request of the stream (the stream depends on the seed only). */
function nextRequest(rng: Rng, ctx: { missing: string; chainId: number } = { missing: '0x2', chainId: 4 }): Request {
  const at = pickAt(rng);
  const zeros = rng.chance(0.05) ? rng.int(1, 5) : 0;
  // An odd count spells it with a '+' first: %2B, as a bare '+' in a query string is a space.
  const spelling = zeros % 2 === 1 ? `%2B${'0'.repeat(zeros - 1)}` : '0'.repeat(zeros);
  const family = rng.next();
  if (family < 0.2) return accountRequest(rng, at, spelling, ctx.missing);
  if (family < 0.3) return tableRequest(rng, at, spelling);
  if (family < 0.45) return historyRequest(rng, at, ctx.chainId);
  if (rng.chance(0.5)) {
    const present = rng.chance(0.75);
    const key = present ? rng.pick(PRESENT) : rng.pick(ABSENT);
    const hex = key.toString('hex');
    const keyText = rng.pick(['0x' + hex, '0x' + hex.toUpperCase(), hex]);
    const handle = rng.chance(0.8) ? rng.pick(HANDLE_FORMS) : rng.pick(HANDLE2_FORMS);
    // Mostly BCS; a JSON Accept is refused with 403 by both (no ledger headers).
    const accept = rng.chance(0.97)
      ? rng.pick(['application/x-bcs', 'application/x-bcs, application/json', 'application/x-bcs;q=0.9'])
      : 'application/json';
    return {
      endpoint: 'raw_item',
      method: 'POST',
      path: `/v1/tables/${handle}/raw_item`,
      headers: { 'content-type': JSON_TYPE, accept },
      body: Buffer.from(JSON.stringify({ key: keyText })),
      at,
      spelling,
      label: `raw_item ${present ? 'present' : 'absent'}${accept === 'application/json' ? ' (json accept)' : ''}`,
    };
  }
  const accept = rng.pick(['application/json', 'application/x-bcs', undefined]);
  const acceptHeaders: Record<string, string> = accept === undefined ? {} : { accept };
  if (rng.chance(0.35)) {
    const { body, label } = viewBcsBody(rng);
    return {
      endpoint: 'view',
      method: 'POST',
      path: '/v1/view',
      headers: { 'content-type': BCS_VIEW_TYPE, ...acceptHeaders },
      body,
      at,
      spelling,
      label,
    };
  }
  const { call, label } = viewJsonCall(rng);
  return {
    endpoint: 'view',
    method: 'POST',
    path: '/v1/view',
    headers: { 'content-type': JSON_TYPE, ...acceptHeaders },
    body: Buffer.from(viewJsonText(rng, call)),
    at,
    spelling,
    label,
  };
}

/** The pinned version a request asks for, given the sim's ledger when it is sent; null for latest. */
function resolveVersion(at: At, latest: bigint, oldest: bigint): bigint | null {
  switch (at.kind) {
    case 'latest':
      return null;
    case 'window': {
      const v = latest - BigInt(at.back);
      return v < oldest ? oldest : v;
    }
    case 'hot': {
      // A few versions many requests share, so some answers come from the cache.
      const v = latest - (latest % 50n) - 50n * BigInt(at.slot);
      return v < oldest ? oldest : v;
    }
    case 'edge':
      return oldest + BigInt(at.offset) < 0n ? 0n : oldest + BigInt(at.offset);
    case 'pruned':
      return oldest - BigInt(at.below) < 0n ? 0n : oldest - BigInt(at.below);
    case 'future':
      return latest + BigInt(at.ahead);
    case 'u64max':
      return 18446744073709551615n;
  }
}

interface Reply extends ReplyLike {
  headers: Record<string, string | string[] | undefined>;
}

async function send(pool: Pool, req: Request, version: bigint | null, spelling = ''): Promise<Reply> {
  const query = version === null ? '' : `${req.path.includes('?') ? '&' : '?'}ledger_version=${spelling}${version}`;
  const res = await pool.request({
    method: req.method,
    path: req.path + query,
    // Nodes gzip when asked; the proxy compares and stores raw bytes, so do we.
    headers: { ...req.headers, 'accept-encoding': 'identity' },
    body: req.method === 'POST' ? req.body : undefined,
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

function show(r: Reply): string {
  const v = header(r, 'x-node-ledger-version');
  const o = header(r, 'x-node-ledger-oldest-version');
  const tier = header(r, 'x-cache-tier');
  return `${r.status} x-cache=${header(r, 'x-cache') ?? '-'}${tier === undefined ? '' : ` (${tier})`} ledger=${v ?? '-'}/${o ?? '-'} type=${header(r, 'content-type')} gas=${header(r, 'x-node-gas-used') ?? '-'} body=${JSON.stringify(r.body.subarray(0, 160).toString('latin1'))}`;
}

/** The allowed differences, by name: each is explained where it is counted. */
type Allowed =
  | 'future: both 404 version_not_found, the messages name different latest versions'
  | 'future when sent, reached before the sim was asked'
  | 'pruned after the proxy answered (compared with the unpruned oracle)'
  | 'cache hit below a prune line the proxy had not learned yet (compared with the oracle)'
  | 'latest read answered at a version the lagging node had (the proxy had not seen the leader pass it)'
  | "pinned read below the leader's prune line, answered by the lagging node that still had it (compared with the oracle)"
  | 'transaction or block not there yet when sent, there when the sim was asked'
  | 'undecodable view body at a version the sim had but the proxy had not seen a node reach (it answers without asking one)'
  | 'undecodable view body below a prune line the proxy had not learned yet (compared with the oracle)'
  | 'transaction or block pruned after the proxy answered (compared with the unpruned oracle)'
  | 'transaction or block: cache hit below a prune line the proxy had not learned yet (compared with the oracle)'
  | "transaction or block below the leader's prune line, answered by the lagging node that still had it (compared with the oracle)";

export interface Report {
  seed: number;
  requests: number;
  compared: number;
  identical: number;
  allowed: Map<Allowed, number>;
  wrong: number;
  wrongExamples: string[];
  /** ledger headers one client saw going back */
  backwards: number;
  backwardsExamples: string[];
  /** forwarded latest reads that shared an earlier call: read below the sim's latest at send */
  coalescedOlder: number;
  /** pinned reads the proxy answered 410 while the version was still readable when sent (pruned in flight) */
  prunedInFlight: number;
  byCache: Map<string, number>;
  byStatus: Map<string, number>;
  versions: { first: bigint; last: bigint; oldestLast: bigint };
  seconds: number;
}

export interface RunOptions {
  seed: number;
  total: number;
  concurrency: number;
  /** the proxies' base urls; worker w uses proxies[w % n] (its own client, its own headers) */
  proxies: string[];
  node: SimNode;
  /** a sim on the same ledger that never prunes: the answer at a version the node pruned since */
  oracle: SimNode;
  /** the sim's ledger advances by 1..maxAdvance versions every 1..advanceEvery requests */
  advanceEvery: number;
  maxAdvance: number;
  /** a second node behind the proxy on the same ledger, kept `behind` versions behind `node` */
  lagging?: { node: SimNode; behind: bigint };
}

interface LedgerLike {
  ledgerVersion: bigint;
  oldestLedgerVersion: bigint;
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export async function runDifferential(o: RunOptions): Promise<Report> {
  const rng = new Rng(o.seed);
  const proxyPools = o.proxies.map(
    (url) =>
      new Pool(url, {
        connections: Math.ceil(o.concurrency / o.proxies.length),
        headersTimeout: 20_000,
        bodyTimeout: 20_000,
      }),
  );
  const simPool = new Pool(o.node.url, { connections: o.concurrency, headersTimeout: 20_000, bodyTimeout: 20_000 });
  const oraclePool = new Pool(o.oracle.url, { connections: 4, headersTimeout: 20_000, bodyTimeout: 20_000 });
  const report: Report = {
    seed: o.seed,
    requests: 0,
    compared: 0,
    identical: 0,
    allowed: new Map(),
    wrong: 0,
    wrongExamples: [],
    backwards: 0,
    backwardsExamples: [],
    coalescedOlder: 0,
    prunedInFlight: 0,
    byCache: new Map(),
    byStatus: new Map(),
    versions: { first: o.node.ledger.info().ledgerVersion, last: 0n, oldestLast: 0n },
    seconds: 0,
  };
  const started = performance.now();
  const stream = { missing: missingAccount(simAccountExists), chainId: o.node.ledger.info().chainId };
  let next = 0;
  let untilAdvance = rng.int(1, o.advanceEvery);

  const wrong = (what: string): void => {
    report.wrong++;
    if (report.wrongExamples.length < 8) report.wrongExamples.push(what);
  };

  const worker = async (w: number): Promise<void> => {
    const toProxy = proxyPools[w % proxyPools.length];
    // The freshest ledger version this client has seen in the proxy's replies.
    let seen = -1n;
    let seenFrom = '';
    for (;;) {
      const i = next++;
      if (i >= o.total) return;
      // The stream and the advance schedule depend on the seed only (drawn in request order).
      let req = nextRequest(rng, stream);
      if (--untilAdvance <= 0) {
        const step = rng.int(1, o.maxAdvance);
        o.node.ledger.advance(step);
        o.oracle.ledger.advance(step);
        if (o.lagging !== undefined) {
          const gap =
            o.node.ledger.info().ledgerVersion - o.lagging.behind - o.lagging.node.ledger.info().ledgerVersion;
          if (gap > 0n) o.lagging.node.ledger.advance(gap);
        }
        untilAdvance = rng.int(1, o.advanceEvery);
      }
      const before = o.node.ledger.info();
      const laggingBefore = o.lagging?.node.ledger.info();
      const resolved = resolveVersion(req.at, before.ledgerVersion, before.oldestLedgerVersion);
      // A transaction or block: the resolved version picks the item; its path has no ledger_version.
      const itemVersion = req.item === undefined ? undefined : (resolved ?? before.ledgerVersion);
      if (req.item !== undefined) req = { ...req, path: req.item.path(itemVersion!) };
      const version = req.item === undefined ? resolved : null;
      const proxied = await send(toProxy, req, version, req.spelling);
      const after = o.node.ledger.info();
      report.requests++;
      const cache = header(proxied, 'x-cache') ?? '-';
      const tier = header(proxied, 'x-cache-tier');
      bump(report.byCache, tier === undefined ? cache : `${cache} ${tier}`);
      bump(report.byStatus, `${req.endpoint} ${proxied.status} ${errorCodeOf(proxied) ?? ''}`.trim());
      const where = `#${i} ${req.label} ${req.path}${version === null ? ' (latest)' : `?ledger_version=${req.spelling}${version}`} [${req.at.kind}] body=${JSON.stringify(req.body.toString('latin1').slice(0, 120))} accept=${req.headers.accept ?? '-'}; sim ledger when sent ${before.ledgerVersion}/${before.oldestLedgerVersion}, when answered ${after.ledgerVersion}/${after.oldestLedgerVersion}\n    proxy: ${show(proxied)}`;

      const problem = shapeProblem(proxied);
      if (problem !== null) {
        wrong(`not node-shaped: ${problem}: ${where}`);
        continue;
      }
      // Ledger headers: never back for one client, never beyond what the sim has.
      const pv = header(proxied, 'x-node-ledger-version');
      if (pv !== undefined) {
        const v = BigInt(pv);
        if (v < seen) {
          report.backwards++;
          if (report.backwardsExamples.length < 8)
            report.backwardsExamples.push(`${v} after ${seen} (${seenFrom}): ${where}`);
        }
        if (v > seen) {
          seen = v;
          seenFrom = `#${i} x-cache=${cache}`;
        }
        if (v > after.ledgerVersion)
          wrong(`ledger header ${v} is beyond the sim's latest ${after.ledgerVersion}: ${where}`);
        const po = BigInt(header(proxied, 'x-node-ledger-oldest-version')!);
        if (po > after.oldestLedgerVersion)
          wrong(`oldest-version header ${po} is beyond the sim's ${after.oldestLedgerVersion}: ${where}`);
      }

      if (req.item !== undefined) {
        await judgeItem(req, req.item, itemVersion!, proxied, { before, after, laggingBefore, cache, where });
        continue;
      }

      // The version the answer is about: pinned N, or for a latest read the version in
      // the answering node's ledger header (raw_item bodies and view bodies at a
      // version are deterministic, so the sim is asked pinned at that version).
      let at: bigint | null = version;
      if (version === null && pv !== undefined) {
        at = BigInt(pv);
        // The proxy's own reply (an undecodable body) carries its newest snapshot: it read nothing at it.
        if (at < before.ledgerVersion && cache !== 'BYPASS') {
          // A latest read that joined another client's call in flight was read a
          // little earlier than this one was sent: counted; only COALESCED may.
          if (cache === 'COALESCED') report.coalescedOlder++;
          // Behind two nodes, the proxy knows each node's version only from its last
          // answer: the lagging node may look ahead of the leader's last answer.
          // What must hold is that no client sees the version go back (checked above).
          else if (o.lagging !== undefined && at >= before.ledgerVersion - o.lagging.behind) {
            bump(
              report.allowed,
              'latest read answered at a version the lagging node had (the proxy had not seen the leader pass it)',
            );
          } else
            wrong(
              `a forwarded latest read (${cache}) was read at ${at}, below the sim's latest ${before.ledgerVersion} when it was sent: ${where}`,
            );
        }
      }
      // A 410 from the proxy: the sim must have pruned the version by the time the answer came.
      if (proxied.status === 410 && version !== null && version >= after.oldestLedgerVersion) {
        wrong(`410 for a version the sim still had when the answer arrived: ${where}`);
        continue;
      }
      const direct = await send(simPool, req, at);
      report.compared++;
      const detail = (): string => `${where}\n    sim at ${at ?? 'latest'}: ${show(direct)}`;
      const pCode = errorCodeOf(proxied);
      const dCode = errorCodeOf(direct);

      if (sameAnswer(proxied, direct)) {
        report.identical++;
        // 410 for a version that was still readable when sent: the prune came while
        // the request was in flight (the proxy learned it first, or the sim said so).
        if (proxied.status === 410 && version !== null && version >= before.oldestLedgerVersion)
          report.prunedInFlight++;
        continue;
      }
      // (1) Not reached yet: both say 404 version_not_found, but the message names the
      //     latest version at the moment each was asked.
      if (
        proxied.status === 404 &&
        pCode === 'version_not_found' &&
        direct.status === 404 &&
        dCode === 'version_not_found'
      ) {
        const latestLeftOut = (r: Reply): string =>
          r.body.toString('utf8').replace(/latest version is \d+/, 'latest version is N');
        if (latestLeftOut(proxied) === latestLeftOut(direct)) {
          bump(report.allowed, 'future: both 404 version_not_found, the messages name different latest versions');
          continue;
        }
      }
      // (2) Not reached when the proxy asked, reached when the sim was asked.
      if (
        proxied.status === 404 &&
        pCode === 'version_not_found' &&
        version !== null &&
        version > before.ledgerVersion
      ) {
        bump(report.allowed, 'future when sent, reached before the sim was asked');
        continue;
      }
      // (2b) An undecodable body is answered by the proxy without a node: a version
      //      beyond the newest it has seen a node report is "not found" to it.
      if (
        req.label === UNDECODABLE &&
        pCode === 'version_not_found' &&
        dCode === 'invalid_input' &&
        version !== null &&
        pv !== undefined &&
        version > BigInt(pv)
      ) {
        bump(
          report.allowed,
          'undecodable view body at a version the sim had but the proxy had not seen a node reach (it answers without asking one)',
        );
        continue;
      }
      // (3) The sim has pruned the version since (or had, and the proxy answered from
      //     its cache not knowing yet): the answer at that version is the oracle's, a
      //     sim on the same ledger that never prunes.
      if (direct.status === 410 && dCode === 'version_pruned' && proxied.status !== 410 && at !== null) {
        const oracle = await send(oraclePool, req, at);
        if (!sameAnswer(proxied, oracle)) {
          wrong(`the answer differs from the unpruned oracle's: ${detail()}\n    oracle: ${show(oracle)}`);
          continue;
        }
        if (at >= before.oldestLedgerVersion) {
          bump(report.allowed, 'pruned after the proxy answered (compared with the unpruned oracle)');
          continue;
        }
        // Pruned before it was sent: only a cache hit can answer it, and only while the
        // proxy's own snapshot (its oldest-version header) still covers the version.
        const po = header(proxied, 'x-node-ledger-oldest-version');
        if (laggingBefore !== undefined && at >= laggingBefore.oldestLedgerVersion) {
          bump(
            report.allowed,
            "pinned read below the leader's prune line, answered by the lagging node that still had it (compared with the oracle)",
          );
          continue;
        }
        if (cache === 'HIT' && po !== undefined && BigInt(po) <= at) {
          bump(report.allowed, 'cache hit below a prune line the proxy had not learned yet (compared with the oracle)');
          continue;
        }
        if (req.label === UNDECODABLE && po !== undefined && BigInt(po) <= at) {
          bump(
            report.allowed,
            'undecodable view body below a prune line the proxy had not learned yet (compared with the oracle)',
          );
          continue;
        }
        wrong(
          `answered a version the sim had pruned before it was sent, below the proxy's own prune line: ${detail()}`,
        );
        continue;
      }
      // Anything else is a wrong answer: the proxy said 410 while the sim still had the
      // version, a different body, status, content type or gas, ...
      const body = proxied.status === 200 ? null : parseErrorBody(proxied);
      wrong(`${typeof body === 'string' ? body + ': ' : ''}the proxy's answer differs from the sim's: ${detail()}`);
    }
  };

  /**
   * A transaction or block: the sim is asked the same path after the proxy
   * answered. They may differ only because the ledger moved in between: the item
   * appeared (a 404 when sent), or was pruned (then the proxy's answer must be
   * the oracle's, and pruned only after it was sent, or below a prune line the
   * proxy could not know yet, or still held by the lagging node).
   */
  const judgeItem = async (
    req: Request,
    item: PathItem,
    v: bigint,
    proxied: Reply,
    w: { before: LedgerLike; after: LedgerLike; laggingBefore?: LedgerLike; cache: string; where: string },
  ): Promise<void> => {
    if (proxied.status === 410 && itemState(item, v, w.after.ledgerVersion, w.after.oldestLedgerVersion) !== 'pruned') {
      wrong(`410 for a transaction or block the sim still had when the answer arrived: ${w.where}`);
      return;
    }
    const direct = await send(simPool, req, null);
    report.compared++;
    const detail = `${w.where}\n    sim: ${show(direct)}`;
    if (sameAnswer(proxied, direct)) {
      report.identical++;
      return;
    }
    const sent = itemState(item, v, w.before.ledgerVersion, w.before.oldestLedgerVersion);
    if (proxied.status === 404 && sent === 'not yet') {
      bump(report.allowed, 'transaction or block not there yet when sent, there when the sim was asked');
      return;
    }
    // Pruned on the sim by now (a hash has no 410 on a node: it is not found).
    const gone = direct.status === 410 || (item.kind === 'txn_by_hash' && direct.status === 404);
    if (proxied.status === 200 && gone) {
      const oracle = await send(oraclePool, req, null);
      if (!sameAnswer(proxied, oracle)) {
        wrong(`the answer differs from the unpruned oracle's: ${detail}\n    oracle: ${show(oracle)}`);
        return;
      }
      if (sent !== 'pruned') {
        bump(
          report.allowed,
          'transaction or block pruned after the proxy answered (compared with the unpruned oracle)',
        );
        return;
      }
      if (
        w.laggingBefore !== undefined &&
        itemState(item, v, w.laggingBefore.ledgerVersion, w.laggingBefore.oldestLedgerVersion) !== 'pruned'
      ) {
        bump(
          report.allowed,
          "transaction or block below the leader's prune line, answered by the lagging node that still had it (compared with the oracle)",
        );
        return;
      }
      const pv = header(proxied, 'x-node-ledger-version');
      const po = header(proxied, 'x-node-ledger-oldest-version');
      if (
        w.cache === 'HIT' &&
        pv !== undefined &&
        po !== undefined &&
        itemState(item, v, BigInt(pv), BigInt(po)) !== 'pruned'
      ) {
        bump(
          report.allowed,
          'transaction or block: cache hit below a prune line the proxy had not learned yet (compared with the oracle)',
        );
        return;
      }
      wrong(
        `answered a transaction or block the sim had pruned before it was sent, below the proxy's own prune line: ${detail}`,
      );
      return;
    }
    wrong(`the proxy's answer differs from the sim's: ${detail}`);
  };

  try {
    await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w)));
  } finally {
    await Promise.all([...proxyPools, simPool, oraclePool].map((p) => p.destroy()));
  }
  const info = o.node.ledger.info();
  report.versions.last = info.ledgerVersion;
  report.versions.oldestLast = info.oldestLedgerVersion;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

export function formatReport(label: string, r: Report): string {
  const allowed = [...r.allowed].map(([k, n]) => `      ${n}\t${k}`).join('\n') || '      none';
  const cache = [...r.byCache]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const status = [...r.byStatus]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `      ${n}\t${k}`)
    .join('\n');
  const allowedTotal = [...r.allowed.values()].reduce((a, b) => a + b, 0);
  return (
    `[differential ${label}] DIFF_SEED=${r.seed}: ${r.requests} requests in ${r.seconds.toFixed(1)} s (${Math.round(r.requests / r.seconds)}/s), ` +
    `ledger ${r.versions.first} → ${r.versions.last} (oldest ${r.versions.oldestLast} at the end)\n` +
    `  compared ${r.compared}: identical ${r.identical}, allowed differences ${allowedTotal}, WRONG ${r.wrong}; ledger headers going back ${r.backwards}\n` +
    `  allowed differences by kind:\n${allowed}\n` +
    `  also: ${r.prunedInFlight} pinned reads pruned while in flight (410 from both), ${r.coalescedOlder} coalesced latest reads read below the latest at send\n` +
    `  x-cache: ${cache}\n  answers:\n${status}` +
    (r.wrongExamples.length > 0
      ? `\n  wrong answers (first ${r.wrongExamples.length}):\n    ${r.wrongExamples.join('\n    ')}`
      : '') +
    (r.backwardsExamples.length > 0
      ? `\n  ledger headers going back (first ${r.backwardsExamples.length}):\n    ${r.backwardsExamples.join('\n    ')}`
      : '')
  );
}
