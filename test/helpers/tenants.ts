// Pieces the tenant suites share: keys and their config, a request from a chosen
// client address, and the 429 a limit answers.
import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { sha256Hex } from './bytes.js';
import { HANDLE, ledgerHeaders, type Reply } from './proxy.js';

/** A clock that stands still: no second or minute ends mid-test. */
export const FROZEN = { now: () => 1_800_000_000_500 };

export const WALLET_KEY = 'wallet-secret-key-1';
export const DAPP_KEY = 'dapp-public-key';
export const DAPP_ORIGIN = 'https://dapp.example';

/** Sends a request from a chosen loopback source address (another client), with headers. */
export function send(
  base: string,
  path: string,
  init: { from?: string; headers?: Record<string, string>; body?: string; method?: string } = {},
): Promise<Reply> {
  const body = init.body;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      base + path,
      {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        localAddress: init.from ?? '127.0.0.1',
        agent: false,
        headers: {
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
          ...init.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: res.statusCode ?? 0, headers, body: raw, json: () => JSON.parse(raw.toString('utf8')) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const pinnedItem = (key: string, version = 1000) => ({
  path: `/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`,
  body: JSON.stringify({ key }),
  headers: { accept: 'application/x-bcs' },
});
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export function tenantsConfig(extra: Record<string, unknown> = {}) {
  return {
    tenants: {
      anonymous: { requestsPerSecond: 3 },
      list: [
        { name: 'wallet-backend', keys: [{ sha256: sha256Hex(WALLET_KEY) }], priority: 'high', nodeUnitsPerMinute: 12 },
        {
          name: 'dapp-web',
          keys: [{ sha256: sha256Hex(DAPP_KEY) }],
          origins: [DAPP_ORIGIN],
          perAddress: { requestsPerSecond: 2 },
        },
      ],
      ...extra,
    },
  };
}

export function expectTooMany(reply: Reply, limit: string): void {
  expect(reply.status).toBe(429);
  expect(reply.json()).toMatchObject({ error_code: 'rate_limited', vm_error_code: null });
  expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(reply.headers['ratelimit-limit']).toBe(limit);
  expect(reply.headers['ratelimit-remaining']).toBe('0');
  expect(reply.headers['ratelimit-reset']).toBe(reply.headers['retry-after']);
  expect(Object.keys(ledgerHeaders(reply))).toHaveLength(7);
}
