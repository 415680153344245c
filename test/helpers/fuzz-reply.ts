// What every reply of the proxy must look like (api.md §5, §7), as plain checks
// that return a problem description (or null) so that a fuzz or differential
// loop can count and report them instead of stopping at the first.
import { ERROR_CODES, ERROR_STATUSES } from '../../src/errors.js';

export interface ReplyLike {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The seven ledger headers, lower-case, without the vendor prefix. */
const LEDGER_HEADER_SUFFIXES = [
  'chain-id',
  'ledger-version',
  'ledger-oldest-version',
  'ledger-timestampusec',
  'epoch',
  'block-height',
  'oldest-block-height',
] as const;

export function header(reply: ReplyLike, name: string): string | undefined {
  const v = reply.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The same answer: status, body bytes, content type, gas used and the next page's cursor (what a client reads). */
export function sameAnswer(a: ReplyLike, b: ReplyLike): boolean {
  return (
    a.status === b.status &&
    a.body.equals(b.body) &&
    header(a, 'content-type') === header(b, 'content-type') &&
    header(a, 'x-node-gas-used') === header(b, 'x-node-gas-used') &&
    header(a, 'x-node-cursor') === header(b, 'x-node-cursor')
  );
}

export interface ErrorBody {
  message: string;
  error_code: string;
  vm_error_code: number | null;
}

/** The error body of a reply, or a description of why it is not api.md §5's body. */
export function parseErrorBody(reply: ReplyLike): ErrorBody | string {
  const type = (header(reply, 'content-type') ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/json')
    return `error reply with content-type ${JSON.stringify(header(reply, 'content-type'))}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.body.toString('utf8'));
  } catch {
    return `error reply whose body is not JSON: ${JSON.stringify(reply.body.toString('latin1').slice(0, 200))}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return `error body is not an object: ${reply.body.toString('utf8').slice(0, 200)}`;
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'error_code,message,vm_error_code') return `error body members are ${JSON.stringify(keys)}`;
  const b = body as Record<string, unknown>;
  if (typeof b.message !== 'string') return 'error body message is not a string';
  if (typeof b.error_code !== 'string' || !(ERROR_CODES as readonly string[]).includes(b.error_code))
    return `error_code ${JSON.stringify(b.error_code)} is not one of api.md §5`;
  if (b.vm_error_code !== null && typeof b.vm_error_code !== 'number')
    return `vm_error_code ${JSON.stringify(b.vm_error_code)} is neither a number nor null`;
  return b as unknown as ErrorBody;
}

/**
 * api.md §5/§7: 200 (an answer), or an allowed error status with exactly the error
 * body. `head`: a reply to HEAD has no body to check. `coded`: the request's body
 * has a transfer coding other than chunked, which may be refused with 501
 * (RFC 9112 §6.1). Returns null when fine.
 */
export function shapeProblem(
  reply: ReplyLike,
  options: { head?: boolean; prefix?: string; coded?: boolean } = {},
): string | null {
  const prefix = options.prefix ?? 'x-node-';
  const allowed =
    reply.status === 200 ||
    (ERROR_STATUSES as readonly number[]).includes(reply.status) ||
    (options.coded === true && reply.status === 501);
  if (!allowed) return `status ${reply.status} is not allowed`;
  const present = LEDGER_HEADER_SUFFIXES.filter((s) => header(reply, prefix + s) !== undefined);
  if (present.length !== 0 && present.length !== LEDGER_HEADER_SUFFIXES.length)
    return `only some ledger headers: ${present.join(',')}`;
  if (reply.status === 200 || options.head) return null;
  const body = parseErrorBody(reply);
  return typeof body === 'string' ? body : null;
}

/** The error_code of an error reply, or null. */
export function errorCodeOf(reply: ReplyLike): string | null {
  if (reply.status === 200) return null;
  const body = parseErrorBody(reply);
  return typeof body === 'string' ? null : body.error_code;
}

/**
 * Failures of a fuzz or differential run, grouped by kind (the first line of the
 * message, numbers left out), so that one run reports every kind of failure with
 * an example instead of stopping at the first.
 */
export class FailureLog {
  private readonly kinds = new Map<string, { count: number; example: string }>();
  total = 0;

  record(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const kind = message.split('\n', 1)[0].replace(/\d+/g, 'N').slice(0, 200);
    const entry = this.kinds.get(kind) ?? { count: 0, example: message.slice(0, 3000) };
    entry.count++;
    this.kinds.set(kind, entry);
    this.total++;
  }

  summary(): string {
    if (this.total === 0) return 'no failures';
    return [...this.kinds]
      .sort((a, b) => b[1].count - a[1].count)
      .map(([kind, v]) => `${v.count} × ${kind}\n  first example: ${v.example}`)
      .join('\n\n');
  }
}
