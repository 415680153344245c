// A validated read of one of the two served endpoints, in canonical form. http/
// builds it from a client request; serve/ and cache/ work only with this.
import type { AnswerFormat } from './accept.js';

export type Endpoint = 'raw_item' | 'view';

export interface ReadRequest {
  endpoint: Endpoint;
  /** the pinned ledger version, or null for a latest read */
  version: bigint | null;
  /** the answer format the client's Accept selected */
  format: AnswerFormat;
  /**
   * The canonical request, without version and format: equal for requests a node
   * must answer identically (handle forms, hex case, JSON whitespace and member order).
   */
  identity: string;
  /** the node path without query, with the canonical handle: /v1/tables/0x…/raw_item or /v1/view */
  path: string;
  /** the request body to send to a node (the client's own, validated) */
  body: Buffer;
  /** the request content type to send to a node */
  contentType: string;
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
  /** the ledger version the answer was read at */
  version: bigint;
  /** the body gzipped, kept in memory for clients that accept it (never in Redis) */
  gzip?: Buffer;
}
