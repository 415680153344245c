// A validated read of one of the cached routes, in canonical form. routes/ builds
// it from a client request; serve/ and cache/ work only with this.
import type { AnswerFormat } from './accept.js';

/**
 * What the read path must know of a cached route (routes/ holds the table of
 * them): data, so one read path serves every route alike.
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
  /** a 400 invalid_input is a fact about the request at N (a view that aborts) */
  readonly cachesInvalidInput?: boolean;
  /**
   * Path routes: where a stored answer's version comes from. 'path': the path's
   * version (by_version routes); 'answer': the answer's own "version" (a
   * transaction by hash, pruned with it) or "first_version" (a block by height).
   */
  readonly itemVersion?: 'path' | 'answer';
}

/** What a path route's path names, for the prune check and the node to ask. */
export type PathItem = { version: bigint } | { height: bigint } | { hash: string };

export interface ReadRequest {
  route: ReadRoute;
  /** the pinned ledger version, or null for a latest read (always null on path routes) */
  version: bigint | null;
  /** path routes: the item the path names */
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
}

/** What a node (or the cache) answered: enough to replay the reply byte for byte. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: Buffer;
  /** the X-…-GAS-USED value, when the node sent one */
  gasUsed?: string;
  /** the X-…-CURSOR value (next page), when the node sent one: replayed with this entry only */
  cursor?: string;
  /** the ledger version the answer was read at (path routes: the item's version) */
  version: bigint;
  /** the body gzipped, kept in memory for clients that accept it (never in Redis) */
  gzip?: Buffer;
}
