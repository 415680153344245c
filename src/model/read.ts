// A validated read of one of the cached routes, in canonical form. routes/ builds
// it from a client request; serve/ and cache/ work only with this.
import type { AnswerFormat } from '../wire/accept.js';
import type { StateRead, StateTarget } from './state-read.js';

/**
 * What the read path must know of a cached route (routes/ holds the table of
 * them): its data and its rules, so one read path serves every route alike and a
 * new route touches only routes/.
 */
export interface ReadRoute {
  /** stable name, part of every cache key: renaming one orphans its entries */
  readonly name: string;
  /** the metrics and request-log label: raw_item, view, accounts, tables, transactions, blocks */
  readonly family: string;
  /**
   * 'version': `?ledger_version=N` pins the answer (absent: a latest read, stored
   * as the answer at its header version). 'path': the path itself names an
   * immutable item (a transaction, a block), cached once it exists.
   */
  readonly pin: 'version' | 'path';
  /** 404 error codes that are facts about the item at N, cached like a 200 */
  readonly deterministic404: readonly string[];
  /**
   * 404 error codes that say the node has not reached the item yet (a version, a
   * block or a transaction above its latest): never stored, and an answer only
   * for the reads already waiting when the node call that got it was sent.
   */
  readonly notYet404: readonly string[];
  /** a 400 invalid_input is a fact about the request at N (a view that aborts) */
  readonly cachesInvalidInput?: boolean;
  /** what pruneAt() names: a ledger version, or a block height (a block by height) */
  readonly pruneBy: 'version' | 'height';
  /**
   * The version (or block height) the request names, which a node answers 410 for
   * once it is pruned, checked before any lookup. null when it names none: a latest
   * read, or a transaction by hash, whose stored answer is then dropped once the
   * version it belongs to (answerVersion) is pruned.
   */
  pruneAt(req: ReadRequest): bigint | null;
  /** The version a node must hold to answer: the call goes to a node that covers it. null: any node's latest. */
  routingVersion(req: ReadRequest): bigint | null;
  /**
   * The version a pinned read's answer belongs to: its Redis TTL and, when the
   * request names no prune line, its pruning. null when the answer does not tell
   * (then it is not stored).
   */
  answerVersion(req: ReadRequest, answer: AnswerFacts): bigint | null;
  /** Why a 200 answer may still change (a pending transaction); undefined when it is final. Absent: every 200 is final. */
  notFinal?(answer: AnswerFacts): string | undefined;
  /**
   * The same read pinned at `version` (`?ledger_version=version`): how a latest
   * read's answer is asked of another node at its header version. Absent on path
   * routes, which have no latest read.
   */
  pinnedAt?(req: ReadRequest, version: bigint): ReadRequest;
  /**
   * What state a latest read's stored answer is read from (SPEC-feed rule 5): the
   * change feed answers the read from it while no version writes any of it. null,
   * or absent on the route: never answered from the feed (views, balances, JSON
   * table items), always forwarded.
   */
  stateRead?(req: ReadRequest, answer: ReplayedAnswer): StateRead | null;
}

/** What a route's rules read of a node's answer. */
export interface AnswerFacts extends Pick<ReplayedAnswer, 'status' | 'contentType' | 'body'> {
  /** the body parsed, when the node client parsed it (a 200 JSON answer) */
  json?: unknown;
  /** the snapshot in the answer's ledger headers, when it had them */
  ledger: { ledgerVersion: bigint } | null;
}

/** What a path route's path names; read by the route's own rules only. */
export type PathItem = { version: bigint } | { height: bigint } | { hash: string };

export interface ReadRequest {
  route: ReadRoute;
  /** the pinned ledger version, or null for a latest read (always null on path routes) */
  version: bigint | null;
  /** path routes: the item the path names (read by the route's own rules) */
  item?: PathItem;
  /** the answer format the client's Accept selected */
  format: AnswerFormat;
  /**
   * The canonical request, without version and format: equal for requests a node
   * must answer identically (address forms, hex case, parameters a node ignores,
   * JSON whitespace and member order).
   */
  identity: string;
  method: 'GET' | 'POST';
  /** the node path with the canonical query: /v1/accounts/0x…/resources?ledger_version=5&limit=10 */
  path: string;
  /** the request body to send to a node (the client's own, validated); POST only */
  body?: Buffer;
  /** the request content type to send to a node, with a body */
  contentType?: string;
  /** the Accept header to send to a node */
  accept: string;
  /**
   * Input a node refuses only once it has read its ledger (a BCS view body that
   * does not decode): the message of its 400 invalid_input. The read path answers
   * it without a node call, after the version checks a node makes first.
   */
  refusedAtLedger?: string;
  /** what the request names in the ledger's state, for the route's stateRead */
  target?: StateTarget;
}

/**
 * What a reply replays of an answer, byte for byte, whether a node sent it just
 * now or a tier kept it: a node's answer, a stored one and a read's result each
 * carry these.
 */
export interface ReplayedAnswer {
  status: number;
  contentType: string;
  /** the body, decompressed: the proxy stores and compares raw bytes */
  body: Buffer;
  /** the X-…-GAS-USED value, when the node sent one */
  gasUsed?: string;
  /** the X-…-CURSOR value (the next page of a list), when the node sent one: replayed with this answer only */
  cursor?: string;
}

/**
 * An object literal of T that names every field of T, the absent ones too, so a
 * field added to T and not to the literal does not compile. For an object made
 * from another with a field or two changed: in Node 20's V8, each object made by
 * a spread and then given a field gets a hidden class of its own, so objects made
 * that way per request or per entry each have a new one, and every read of their
 * fields is megamorphic (a field they lack is looked up the slow way).
 */
export type EveryField<T> = { [K in keyof Required<T>]: T[K] };

/** An answer as a cache tier keeps it: what to replay, and the version it belongs to. */
export interface StoredAnswer extends ReplayedAnswer {
  /** the ledger version the answer was read at (path routes: the item's version) */
  version: bigint;
  /** the body gzipped, kept in memory for clients that accept it (never in Redis) */
  gzip?: Buffer;
}

/** `answer` with the body and gzip copy given, as a tier keeps it: every field named (EveryField says why). */
export function storedAnswerWith(answer: StoredAnswer, body: Buffer, gzip: Buffer | undefined): StoredAnswer {
  const stored: EveryField<StoredAnswer> = {
    status: answer.status,
    contentType: answer.contentType,
    body,
    gasUsed: answer.gasUsed,
    cursor: answer.cursor,
    version: answer.version,
    gzip,
  };
  return stored;
}
