// What a node's probe got, said where an operator looks: an upstream that is not
// a node (a plain web server's 404 page, its index, some other JSON, a closed
// port, a node's own error) is down, and both the log line of that change and
// /readyz say what its GET /v1 got (status and content type, or the transport's
// failure) against what was expected: HTTP 200 JSON with the ledger info. Both
// name each node with its url (origin and path), so an operator sees which node
// a name stands for and which path its probe asked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PROBE_EXPECTED } from '../../src/upstream/nodes/health.js';
import { gateway } from '../helpers/gateway.js';
import { call, capturedLog, freePort, proxy, QUIET_ROUTING, sim } from '../helpers/proxy.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A web server that answers every request with `status`, `type` and `body`; `paths` gets each request's path. */
async function webServer(status: number, type: string, body: string, paths: string[] = []): Promise<string> {
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(status, { 'content-type': type }).end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("a node's probe: what it got, against what was expected", () => {
  it('in the log line of its going down and in /readyz, for each way an upstream is not a node', async () => {
    const node = await sim();
    const expected: Array<[name: string, url: string, got: string]> = [
      [
        'nginx-404',
        await webServer(404, 'text/html', '<html><body><h1>404 Not Found</h1></body></html>'),
        'HTTP 404 text/html',
      ],
      ['index-page', await webServer(200, 'text/html; charset=utf-8', '<html>welcome</html>'), 'HTTP 200 text/html'],
      [
        'other-json',
        await webServer(200, 'application/json', '{"status":"ok"}'),
        'HTTP 200 application/json that is not a ledger info',
      ],
      [
        'broken-json',
        await webServer(200, 'application/json', '{"chain_id":'),
        'HTTP 200 application/json that is not JSON',
      ],
      [
        'node-error',
        await webServer(
          503,
          'application/json',
          '{"message":"busy","error_code":"internal_error","vm_error_code":null}',
        ),
        'HTTP 503 application/json (internal_error)',
      ],
      ['closed-port', `http://127.0.0.1:${await freePort()}`, 'connection refused'],
    ];
    const { logger, lines } = capturedLog();
    const adminPort = await freePort();
    const upstreams = [{ url: node.url, name: 'sim-node' }, ...expected.map(([name, url]) => ({ url, name }))];
    const { app } = await proxy(
      upstreams,
      { routing: QUIET_ROUTING, admin: { host: '127.0.0.1', port: adminPort } },
      { logger },
    );

    for (const [name, url, got] of expected) {
      const down = lines.filter((line) => line.upstream === name && line.transition === 'down');
      expect(down, name).toHaveLength(1);
      expect(down[0], name).toMatchObject({ level: 40, url, got, expected: PROBE_EXPECTED });
      expect(down[0].msg, name).toBe(
        `upstream down: its probe (GET /v1) got ${got}, expected ${PROBE_EXPECTED}; it takes no traffic until it answers again`,
      );
    }

    const readyz = await call(app.adminUrl()!, '/readyz');
    expect(readyz.status).toBe(200);
    expect(readyz.json()).toEqual({
      ready: true,
      upstreams: [
        { name: 'sim-node', url: node.url, state: 'healthy', probe: { ok: true } },
        ...expected.map(([name, url, got]) => ({
          name,
          url,
          state: 'down',
          probe: { ok: false, got, expected: PROBE_EXPECTED },
        })),
      ],
    });
    expect(PROBE_EXPECTED).toBe('HTTP 200 application/json with the ledger info');
  });

  it('/readyz says why it is not ready when no node answers as a node', async () => {
    const web = await webServer(404, 'text/html', '<h1>Not Found</h1>');
    const { app } = await proxy([{ url: web, name: 'web' }], {
      routing: QUIET_ROUTING,
      admin: { host: '127.0.0.1', port: await freePort() },
    });
    const readyz = await call(app.adminUrl()!, '/readyz');
    expect(readyz.status).toBe(503);
    expect(readyz.json()).toEqual({
      ready: false,
      reason: expect.stringContaining('web'),
      upstreams: [
        {
          name: 'web',
          url: web,
          state: 'down',
          probe: { ok: false, got: 'HTTP 404 text/html', expected: PROBE_EXPECTED },
        },
      ],
    });
  });

  it('names a node under a path prefix by its origin and path, and its probe by the path it asked', async () => {
    const node = await sim();
    const hosted = await gateway(node.url, '/api', { name: 'x-api-key', value: 'k-1' });
    const paths: string[] = [];
    const broken = `${await webServer(502, 'text/html', '<h1>Bad Gateway</h1>', paths)}/api`;
    const { logger, lines } = capturedLog();
    // Unnamed, as an operator's first config has them: node1, node2.
    const { app } = await proxy(
      [
        { url: hosted.url, name: undefined, headers: { 'x-api-key': 'k-1' } },
        { url: broken, name: undefined },
      ],
      { routing: QUIET_ROUTING, admin: { host: '127.0.0.1', port: await freePort() } },
      { logger },
    );
    expect(paths).toEqual(['/api/v1']);
    expect(hosted.seen.map((r) => r.url)).toContain('/api/v1');
    const down = lines.filter((line) => line.transition === 'down');
    expect(down).toHaveLength(1);
    expect(down[0]).toMatchObject({ upstream: 'node2', url: broken, got: 'HTTP 502 text/html' });
    expect(down[0].msg).toMatch(/^upstream down: its probe \(GET \/api\/v1\) got HTTP 502 text\/html,/);
    // The header that holds the key is never shown; the url holds none (a key in a url's userinfo or query is refused).
    expect(JSON.stringify(lines)).not.toContain('k-1');

    const readyz = await call(app.adminUrl()!, '/readyz');
    expect(readyz.json().upstreams).toEqual([
      { name: 'node1', url: hosted.url, state: 'healthy', probe: { ok: true } },
      {
        name: 'node2',
        url: broken,
        state: 'down',
        probe: { ok: false, got: 'HTTP 502 text/html', expected: PROBE_EXPECTED },
      },
    ]);
    expect(readyz.body.toString('utf8')).not.toContain('k-1');
  });
});
