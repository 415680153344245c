// Assertions several suites share.
import { expect } from 'vitest';
import { encodeLedgerHeaders, ledgerHeaderNames } from '../../src/ledger/headers.js';
import { simLedgerInfo } from '../../src/sim/index.js';
import type { Reply } from './proxy.js';

/** The seven ledger headers the sim sends for a ledger at (latest, oldest). */
export function simHeaders(latest: bigint, oldest: bigint, chainId = 4, prefix = 'x-node-'): Record<string, string> {
  return Object.fromEntries(encodeLedgerHeaders(ledgerHeaderNames(prefix), simLedgerInfo(chainId, latest, oldest)));
}

/** A node error of `status` (and `code`, when given): JSON with exactly the node's three members, never a framework's. */
export function expectNodeError(reply: Pick<Reply, 'status' | 'headers' | 'body'>, status: number, code?: string): void {
  expect(reply.status, reply.body.toString()).toBe(status);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(reply.body.toString('utf8'));
  expect(Object.keys(body).sort()).toEqual(['error_code', 'message', 'vm_error_code']);
  expect(typeof body.message).toBe('string');
  if (code !== undefined) expect(body.error_code).toBe(code);
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
