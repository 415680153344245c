// The admin listener (/metrics, /healthz, /readyz, /cache/purge) is not reachable on the public
// port, and the public API is not served on the admin port: each answers the
// other's paths with a 404 node error body, and the admin port never calls a node.
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { call, proxy, sim, type Reply, QUIET_ROUTING } from '../helpers/proxy.js';
import { expectNodeErrorBody, httpRequest, rawHttp } from '../helpers/raw-socket.js';

const ADMIN_PATHS = [
  '/metrics',
  '/healthz',
  '/readyz',
  '/metrics?x=1',
  '/healthz/',
  '/METRICS',
  '//metrics',
  '/v1/../metrics',
  '/v1/%2e%2e/metrics',
  '/./metrics',
  '/cache/purge',
  '/v1/../cache/purge',
];
const KEY_BODY = '{"key":"0x01"}';
const ADD_BODY = '{"function":"0x1::sim::add","type_arguments":[],"arguments":["1","2"]}';

async function setup() {
  const node = await sim();
  const adminPort = await freePort();
  const { app, url } = await proxy([node], { admin: { port: adminPort }, routing: QUIET_ROUTING });
  const adminUrl = app.adminUrl();
  if (adminUrl === undefined) throw new Error('admin listener not started');
  return { node, url, adminUrl, adminPort };
}

function expect404(reply: Reply | Awaited<ReturnType<typeof rawHttp>>, label: string): void {
  expectNodeErrorBody(reply, 404, 'web_framework_error', label);
}

describe('admin and public listeners are apart', () => {
  it('the admin endpoints answer on the admin port (sanity)', async () => {
    const { adminUrl } = await setup();
    expect((await call(adminUrl, '/healthz')).status).toBe(200);
    expect((await call(adminUrl, '/readyz')).status).toBe(200);
    const metrics = await call(adminUrl, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body.toString()).toContain('ledger_proxy_');
  });

  it('/metrics, /healthz, /readyz, /cache/purge (and spellings of them) on the public port → 404 error body', async () => {
    const { node, url } = await setup();
    for (const path of ADMIN_PATHS) {
      for (const method of ['GET', 'HEAD', 'POST'] as const) {
        const reply = await rawHttp(
          url,
          httpRequest(
            `${method} ${path} HTTP/1.1`,
            ['host: x', 'connection: close'],
            method === 'POST' ? '{}' : undefined,
          ),
        );
        if (method === 'HEAD') {
          expect(reply.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
          continue;
        }
        expect([400, 404], `${method} ${path}: ${reply.body.toString()}`).toContain(reply.status);
        expectNodeErrorBody(reply, undefined, 'web_framework_error', `${method} ${path}`);
        expect(reply.body.toString(), `${method} ${path}`).not.toMatch(/ledger_proxy_|"ready"|"status":"ok"|"purged"/);
      }
    }
    // Nor did any of them reach the node (which has no such routes either).
    expect(node.counters.requests.filter((r) => r.url !== '/v1')).toEqual([]);
  });

  it('the public API on the admin port → 404 error body, and no node is called', async () => {
    const { node, adminUrl } = await setup();
    const requests: Array<[string, Record<string, string>, string?]> = [
      ['GET /v1', {}],
      ['GET /v1/estimate_gas_price', {}],
      ['POST /v1/view', { 'content-type': 'application/json', accept: 'application/json' }, ADD_BODY],
      [
        'POST /v1/view?ledger_version=990',
        { 'content-type': 'application/json', accept: 'application/json' },
        ADD_BODY,
      ],
      ['POST /v1/tables/0x1/raw_item', { 'content-type': 'application/json', accept: 'application/x-bcs' }, KEY_BODY],
      ['POST /v1/transactions', { 'content-type': 'application/json' }, '{}'],
    ];
    for (const [line, headers, body] of requests) {
      const [method, path] = line.split(' ');
      const reply = await call(adminUrl, path, { method: method as 'GET' | 'POST', headers, body });
      expect404(reply, `admin ${line}`);
    }
    expect(node.counters.requests.filter((r) => r.url !== '/v1')).toEqual([]);
    expect(node.counters.byRoute.ledger_info, 'only the start-up probe').toBe(1);
  });

  it('the admin listener binds to loopback by default, apart from the public one', async () => {
    const { adminUrl, url, adminPort } = await setup();
    expect(new URL(adminUrl).hostname).toBe('127.0.0.1');
    expect(new URL(adminUrl).port).toBe(String(adminPort));
    expect(new URL(url).port).not.toBe(String(adminPort));
  });
});
