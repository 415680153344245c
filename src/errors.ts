// The error type of the proxy (and of the simulated node): every failure that
// reaches a client is a NodeError, rendered by errorBody() into api.md §5's body.

export const ERROR_CODES = [
  'account_not_found',
  'resource_not_found',
  'module_not_found',
  'struct_field_not_found',
  'version_not_found',
  'transaction_not_found',
  'table_item_not_found',
  'block_not_found',
  'state_value_not_found',
  'version_pruned',
  'block_pruned',
  'invalid_input',
  'invalid_transaction_update',
  'sequence_number_too_old',
  'vm_error',
  'rejected_by_filter',
  'health_check_failed',
  'mempool_is_full',
  'internal_error',
  'web_framework_error',
  'bcs_not_supported',
  'api_disabled',
  // A node shedding load (aptos-core's memory admission gate): 503, retry shortly.
  'overloaded',
  // The proxy's own, at the edge (api.md §10.2–3): a node never answers these.
  'unauthorized',
  'forbidden',
  'rate_limited',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The only statuses a node may answer an error with. */
export const ERROR_STATUSES = [400, 403, 404, 410, 500, 503] as const;
/**
 * Statuses only the proxy answers with: 401 and 429 at the edge (api.md §10.2–3),
 * 501 for a transfer coding it does not implement (RFC 9112 §6.1).
 */
const PROXY_ERROR_STATUSES = [401, 429, 501] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number] | (typeof PROXY_ERROR_STATUSES)[number];

/**
 * Why an error reply was made: never sent to a client, but counted in the
 * metrics, written in the log line and asserted by tests, so none of them reads
 * message text. 'node' is a node's own error answer relayed as it came.
 */
export type ErrorReason =
  | 'node'
  | 'bad_input'
  | 'undecodable'
  | 'not_found'
  | 'not_implemented'
  | 'pruned'
  | 'not_ready'
  | 'no_node'
  | 'node_failed'
  | 'node_timeout'
  | 'node_broken'
  | 'overloaded'
  | 'node_shedding'
  | 'node_budget'
  | 'deadline'
  | 'rate_limited'
  | 'unauthorized'
  | 'forbidden'
  | 'internal';

/** What a NodeError carries beside its status, code and message. */
export interface NodeErrorOptions {
  /** the body's vm_error_code; null when absent */
  vmErrorCode?: number | null;
  /** why the reply was made; by default, what the status says */
  reason?: ErrorReason;
  /** headers the reply carries beside the body */
  headers?: Record<string, string>;
  /** what each node attempt got, when no node's answer could be used */
  attempts?: readonly string[];
}

export class NodeError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly vmErrorCode: number | null;
  /** why the reply was made, for metrics, logs and tests; never sent */
  readonly reason: ErrorReason;
  /** headers the reply carries beside the body (Retry-After, WWW-Authenticate, RateLimit-*) */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * What each node attempt got (a status and content type, a reset, a timeout),
   * in the proxy's words, when no node's answer could be used: for the access
   * line, so the log says what the nodes did without reading the message
   */
  readonly attempts: readonly string[] | undefined;

  constructor(
    status: ErrorStatus,
    code: ErrorCode,
    message: string,
    { vmErrorCode = null, reason = defaultReason(status), headers = {}, attempts }: NodeErrorOptions = {},
  ) {
    super(message);
    this.name = 'NodeError';
    this.status = status;
    this.code = code;
    this.vmErrorCode = vmErrorCode;
    this.reason = reason;
    this.headers = headers;
    this.attempts = attempts;
  }

  /** Malformed client input: a node answers these with 400 web_framework_error. */
  static badRequest(message: string): NodeError {
    return new NodeError(400, 'web_framework_error', message, { reason: 'bad_input' });
  }

  /**
   * Input a node refuses in its handler, after reading its ledger (a BCS view
   * body that does not decode): 400 invalid_input, with the ledger headers.
   */
  static refusedAtLedger(message: string): NodeError {
    return new NodeError(400, 'invalid_input', message, { reason: 'undecodable' });
  }

  /** The proxy could not get an answer from a node; `reason` says why, `attempts` what each node attempt got. */
  static unavailable(
    message: string,
    reason: ErrorReason = 'no_node',
    headers: Record<string, string> = {},
    attempts?: readonly string[],
  ): NodeError {
    return new NodeError(503, 'internal_error', message, { reason, headers, attempts });
  }

  /**
   * Every node that could answer is shedding load (each answered `overloaded`,
   * or is backing off after it did): the nodes' own code, and when to come back.
   */
  static nodesShedding(message: string, retryAfterSeconds: number, attempts?: readonly string[]): NodeError {
    return new NodeError(503, 'overloaded', message, {
      reason: 'node_shedding',
      headers: { 'retry-after': String(retryAfterSeconds) },
      attempts,
    });
  }

  /** Nothing is served before the chain is known (api.md §8): the reply of every read while the proxy is not ready. */
  static notReady(why: string): NodeError {
    return NodeError.unavailable(`not ready: ${why}`, 'not_ready');
  }

  static pruned(version: bigint): NodeError {
    return new NodeError(410, 'version_pruned', `Ledger version(${version}) has been pruned`, { reason: 'pruned' });
  }

  /** A block height below the oldest block a node keeps (blocks/by_height). */
  static blockPruned(height: bigint): NodeError {
    return new NodeError(410, 'block_pruned', `Block(${height}) has been pruned`, { reason: 'pruned' });
  }

  static versionNotFound(version: bigint, latest: bigint): NodeError {
    return new NodeError(
      404,
      'version_not_found',
      `Ledger version(${version}) not found, latest version is ${latest}`,
      { reason: 'not_found' },
    );
  }

  /**
   * Anything thrown that is not a NodeError becomes a 500 internal_error. The
   * client learns that the proxy failed, not how: raw exception text can name
   * hosts, keys or internals. The cause is kept for the log (ReplyWriter.error).
   */
  static from(err: unknown): NodeError {
    if (err instanceof NodeError) return err;
    const internal = new NodeError(500, 'internal_error', 'Internal error: the proxy could not handle this request', {
      reason: 'internal',
    });
    internal.cause = err;
    return internal;
  }
}

function defaultReason(status: ErrorStatus): ErrorReason {
  if (status === 400 || status === 403) return 'bad_input';
  if (status === 404) return 'not_found';
  if (status === 410) return 'pruned';
  if (status === 501) return 'not_implemented';
  return 'internal';
}

export const ERROR_CONTENT_TYPE = 'application/json';

/** api.md §5: the body of every error. vm_error_code is always present. */
export function errorBody(err: NodeError): Buffer {
  return Buffer.from(JSON.stringify({ message: err.message, error_code: err.code, vm_error_code: err.vmErrorCode }));
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}
