// The simulated node's errors and their body (api.md §5), written apart from the
// proxy's src/errors.ts on purpose: the sim is the differential suite's oracle,
// and an oracle that shared the proxy's error rendering could not see its bugs.

export class SimError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 410 | 500 | 503,
    readonly code: string,
    message: string,
    readonly vmErrorCode: number | null = null,
  ) {
    super(message);
    this.name = 'SimError';
  }

  /** Input a node refuses while extracting the request: 400 web_framework_error. */
  static badRequest(message: string): SimError {
    return new SimError(400, 'web_framework_error', message);
  }

  static pruned(version: bigint): SimError {
    return new SimError(410, 'version_pruned', `Ledger version(${version}) has been pruned`);
  }

  static versionNotFound(version: bigint, latest: bigint): SimError {
    return new SimError(404, 'version_not_found', `Ledger version(${version}) not found, latest version is ${latest}`);
  }

  /** Anything that is not a SimError is a bug in the sim: a node would answer 500. */
  static from(err: unknown): SimError {
    return err instanceof SimError
      ? err
      : new SimError(500, 'internal_error', 'Internal error: simulated node failure');
  }
}

/** The error body: exactly these three members, vm_error_code always present. */
export function simErrorBody(err: SimError): Buffer {
  const body = { message: err.message, error_code: err.code, vm_error_code: err.vmErrorCode };
  return Buffer.from(JSON.stringify(body));
}
