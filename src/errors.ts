// The one error type of the proxy (and of the simulated node): every failure that
// reaches a client is a NodeError, rendered by errorBody() into SPEC §5's body.

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
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The only statuses a node (and so the proxy) may answer an error with. */
export const ERROR_STATUSES = [400, 403, 404, 410, 500, 503] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

export class NodeError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly vmErrorCode: number | null;

  constructor(status: ErrorStatus, code: ErrorCode, message: string, vmErrorCode: number | null = null) {
    super(message);
    this.name = 'NodeError';
    this.status = status;
    this.code = code;
    this.vmErrorCode = vmErrorCode;
  }

  /** Malformed client input: a node answers these with 400 web_framework_error. */
  static badRequest(message: string): NodeError {
    return new NodeError(400, 'web_framework_error', message);
  }

  /** The proxy could not get an answer from any node. */
  static unavailable(message: string): NodeError {
    return new NodeError(503, 'internal_error', message);
  }

  static pruned(version: bigint): NodeError {
    return new NodeError(410, 'version_pruned', `Ledger version(${version}) has been pruned`);
  }

  /** A block height below the oldest block a node keeps (blocks/by_height). */
  static blockPruned(height: bigint): NodeError {
    return new NodeError(410, 'block_pruned', `Block(${height}) has been pruned`);
  }

  static versionNotFound(version: bigint, latest: bigint): NodeError {
    return new NodeError(404, 'version_not_found', `Ledger version(${version}) not found, latest version is ${latest}`);
  }

  /**
   * Anything thrown that is not a NodeError becomes a 500 internal_error. The
   * client learns that the proxy failed, not how: raw exception text can name
   * hosts, keys or internals. The cause is kept for the log (ReplyWriter.error).
   */
  static from(err: unknown): NodeError {
    if (err instanceof NodeError) return err;
    const internal = new NodeError(500, 'internal_error', 'Internal error: the proxy could not handle this request');
    internal.cause = err;
    return internal;
  }
}

export const ERROR_CONTENT_TYPE = 'application/json';

/** SPEC §5: the body of every error. vm_error_code is always present. */
export function errorBody(err: NodeError): Buffer {
  return Buffer.from(JSON.stringify({ message: err.message, error_code: err.code, vm_error_code: err.vmErrorCode }));
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}
