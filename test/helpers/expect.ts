// Assertions several suites share.
import { expect } from 'vitest';
import { encodeLedgerHeaders, ledgerHeaderNames } from '../../src/ledger/headers.js';
import { simLedgerInfo } from '../../src/sim/index.js';
import { ledgerHeaders, type Reply } from './proxy.js';

/** The seven ledger headers the sim sends for a ledger at (latest, oldest). */
export function simHeaders(latest: bigint, oldest: bigint, chainId = 4, prefix = 'x-node-'): Record<string, string> {
  return Object.fromEntries(encodeLedgerHeaders(ledgerHeaderNames(prefix), simLedgerInfo(chainId, latest, oldest)));
}

/** The statuses a node answers an error with. */
const ALLOWED_ERROR_STATUSES = [400, 403, 404, 410, 500, 503, 401, 429, 501];

/** A reply as the tests' clients read it. */
type ReplyLike = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A node-shaped error reply (api.md §5): an allowed status and exactly the three members. */
export function expectNodeErrorBody(
  reply: ReplyLike,
  status?: number,
  code?: string,
  label = '',
): { message: string; error_code: string; vm_error_code: number | null } {
  const text = reply.body.toString('utf8');
  if (status !== undefined) expect(reply.status, `${label} status; body ${text.slice(0, 300)}`).toBe(status);
  expect(ALLOWED_ERROR_STATUSES, `${label} status ${reply.status}`).toContain(reply.status);
  expect(reply.headers['content-type'], `${label} content type`).toBe('application/json');
  const body = JSON.parse(text);
  expect(Object.keys(body).sort(), `${label} body ${text.slice(0, 300)}`).toEqual([
    'error_code',
    'message',
    'vm_error_code',
  ]);
  expect(typeof body.message, `${label} message`).toBe('string');
  if (code !== undefined) expect(body.error_code, `${label} error_code; message ${body.message}`).toBe(code);
  return body;
}

/**
 * A node-shaped error (expectNodeErrorBody) with this status and error_code, and
 * vm_error_code `vmErrorCode` (null unless given); `ledgerHeaders`, when given,
 * says whether the ledger headers come with it. Returns the body.
 */
export function expectError(
  reply: ReplyLike,
  status: number,
  code: string,
  options: { vmErrorCode?: number | null; ledgerHeaders?: boolean; label?: string } = {},
): { message: string; error_code: string; vm_error_code: number | null } {
  const { vmErrorCode = null, ledgerHeaders: withLedger, label = '' } = options;
  const body = expectNodeErrorBody(reply, status, code, label);
  expect(body.vm_error_code, `${label} vm_error_code`).toBe(vmErrorCode);
  if (withLedger !== undefined)
    expect(reply.headers['x-node-ledger-version'] !== undefined, `${label} ledger headers on ${status} ${code}`).toBe(
      withLedger,
    );
  return body;
}

/** A node error body (expectNodeErrorBody), with `status` when given. */
export function errorBodyOf(
  reply: Reply,
  status?: number,
  label = '',
): { message: string; error_code: string; vm_error_code: number | null } {
  return expectNodeErrorBody(reply, status, undefined, label);
}

/** 400 web_framework_error with `messagePart` in the message and no ledger headers. */
export function expectInputError(reply: Reply, messagePart: string | RegExp, label = ''): void {
  const body = errorBodyOf(reply, 400, label);
  expect(body.error_code, label).toBe('web_framework_error');
  expect(body.vm_error_code, label).toBeNull();
  if (typeof messagePart === 'string') expect(body.message, label).toContain(messagePart);
  else expect(body.message, label).toMatch(messagePart);
  expect(ledgerHeaders(reply), `${label} must carry no ledger headers`).toEqual({});
}

/** A 503 internal_error body (never HTML) whose message contains every part; returns the message. */
export function expectUnavailable(reply: Reply, parts: string[]): string {
  expect(reply.status, reply.body.toString()).toBe(503);
  expect(reply.headers['content-type']).toBe('application/json');
  const body = reply.json();
  expect(Object.keys(body).sort()).toEqual(['error_code', 'message', 'vm_error_code']);
  expect(body.error_code).toBe('internal_error');
  expect(body.vm_error_code).toBeNull();
  for (const part of parts) expect(body.message).toContain(part);
  expect(body.message).not.toMatch(/<html/i);
  return body.message as string;
}

/** The error of class `type` that `fn` throws; any other error is rethrown, and throwing nothing fails. */
export function thrownBy<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}

/** The error of class `type` that `promise` rejects with; any other error is rethrown, and resolving fails. */
export async function rejectedBy<E extends Error>(
  type: abstract new (...args: never[]) => E,
  promise: Promise<unknown>,
): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a ${type.name}`);
}
