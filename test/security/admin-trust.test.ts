// What the admin listener trusts (api.md §10.5): no web page can drive it. A
// request that carries Origin is refused (403), so is one whose Host does not
// name the listener (a page on a DNS name rebound to its address), a purge
// takes application/json only, and with admin.token a purge needs that Bearer
// token. A non-loopback admin listener without a token is warned about at start.
// Requests are written on raw sockets, so Host and Origin are exactly what a
// browser (or an attacker) would send.
import { createHash } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { BALANCE, cacheOf, OWNER } from '../helpers/cache.js';
import { freePort } from '../helpers/free-port.js';
import { capturedLog, proxy, QUIET_ROUTING, type Reply, sim, viewJson } from '../helpers/proxy.js';
import { expectNodeErrorBody, httpRequest, type RawReply, rawHttp } from '../helpers/raw-socket.js';

const ALL = '{"all":true}';
const TOKEN = 'admin-token-for-tests';
const TOKEN_SHA256 = createHash('sha256').update(TOKEN).digest('hex');

/** A proxy with its admin listener (`admin` merged into the config's admin section), and a cached view at 990. */
async function setup(admin: Record<string, unknown> = {}, logger = capturedLog(), env: NodeJS.ProcessEnv = {}) {
  const node = await sim();
  const adminPort = await freePort();
  const { app, url } = await proxy(
    [node],
    { admin: { host: '127.0.0.1', port: adminPort, ...admin }, routing: QUIET_ROUTING },
    { logger: logger.logger, env },
  );
  const cached = (): Promise<Reply> => viewJson(url, BALANCE, [OWNER], { version: 990 });
  expect(cacheOf(await cached())).toBe('MISS');
  return { node, app, url, adminPort, cached, lines: logger.lines };
}

/** One request to the admin port, with exactly these headers (a Host among them, or none). */
function send(port: number, line: string, headers: string[], body?: string): Promise<RawReply> {
  return rawHttp(`http://127.0.0.1:${port}`, httpRequest(line, ['connection: close', ...headers], body));
}

/** A purge of everything, as `headers` send it, on `port`. */
const purgeAll = (port: number, headers: string[]): Promise<RawReply> =>
  send(port, 'POST /cache/purge HTTP/1.1', [`host: 127.0.0.1:${port}`, ...headers], ALL);

/** Whether the view at 990 is still cached: nothing was purged. */
async function stillCached(cached: () => Promise<Reply>, label: string): Promise<void> {
  expect(cacheOf(await cached()), label).toBe('HIT memory');
}

describe('the admin listener answers no web page', () => {
  it('a purge that is not application/json gets a node-shaped 400 and purges nothing (a form or text/plain POST needs no preflight)', async () => {
    const { adminPort, cached } = await setup();
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      null,
    ]) {
      const reply = await purgeAll(adminPort, type === null ? [] : [`content-type: ${type}`]);
      const body = expectNodeErrorBody(reply, 400, 'web_framework_error', `content-type ${type}`);
      expect(body.message).toMatch(/application\/json/);
    }
    await stillCached(cached, 'after the refused purges');
    const ok = await purgeAll(adminPort, ['content-type: application/json; charset=utf-8']);
    expect(ok.status, ok.body.toString()).toBe(200);
    expect(cacheOf(await cached())).toBe('MISS');
  });

  it('any request that carries Origin is refused 403 forbidden, on every route, purge included', async () => {
    const { adminPort, cached, lines } = await setup();
    const host = `host: 127.0.0.1:${adminPort}`;
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${adminPort}`]) {
      for (const [line, extra, body] of [
        ['POST /cache/purge HTTP/1.1', ['content-type: application/json'], ALL],
        ['GET /metrics HTTP/1.1', []],
        ['GET /readyz HTTP/1.1', []],
        ['GET /healthz HTTP/1.1', []],
        ['GET /nowhere HTTP/1.1', []],
      ] as Array<[string, string[], string?]>) {
        const reply = await send(adminPort, line, [host, `origin: ${origin}`, ...extra], body);
        expectNodeErrorBody(reply, 403, 'forbidden', `${line} from ${origin}`);
        expect(reply.body.toString()).not.toMatch(/ledger_proxy_|"ready"|"purged"/);
      }
    }
    await stillCached(cached, 'after the purges from web pages');
    // Refusals are logged, at most one line per 10 s with the count of the rest.
    expect(lines.filter((l) => l.msg === 'admin listener refused a request (origin)')).toHaveLength(1);
  });

  it('answers only a Host that names it: a DNS-rebound name is refused 403, its address and localhost are not', async () => {
    const { adminPort, cached } = await setup();
    for (const host of [
      'evil.example',
      `evil.example:${adminPort}`,
      `127.0.0.1.nip.io:${adminPort}`,
      'localhost.evil.example',
      '',
      'a b',
      `10.1.2.3:${adminPort}`,
    ]) {
      for (const line of ['GET /metrics HTTP/1.1', 'GET /readyz HTTP/1.1', 'GET /healthz HTTP/1.1']) {
        expectNodeErrorBody(await send(adminPort, line, [`host: ${host}`]), 403, 'forbidden', `${line} Host ${host}`);
      }
      const purge = await send(
        adminPort,
        'POST /cache/purge HTTP/1.1',
        [`host: ${host}`, 'content-type: application/json'],
        ALL,
      );
      expectNodeErrorBody(purge, 403, 'forbidden', `purge Host ${host}`);
    }
    // No Host at all (HTTP/1.0): nothing names the listener.
    expectNodeErrorBody(await send(adminPort, 'GET /metrics HTTP/1.0', []), 403, 'forbidden', 'no Host');
    await stillCached(cached, 'after the purges by other names');
    for (const host of [
      `127.0.0.1:${adminPort}`,
      '127.0.0.1',
      `localhost:${adminPort}`,
      `LOCALHOST:${adminPort}`,
      `[::1]:${adminPort}`,
    ]) {
      const reply = await send(adminPort, 'GET /metrics HTTP/1.1', [`host: ${host}`]);
      expect(reply.status, `Host ${host}`).toBe(200);
      expect(reply.body.toString()).toContain('ledger_proxy_');
    }
  });

  it('admin.allowedHosts adds the names a scraper or a probe calls it by', async () => {
    const { adminPort } = await setup({ allowedHosts: ['ledger-proxy', 'Metrics.Internal.Example'] });
    for (const host of ['ledger-proxy:9090', `metrics.internal.example:${adminPort}`]) {
      expect((await send(adminPort, 'GET /metrics HTTP/1.1', [`host: ${host}`])).status, host).toBe(200);
    }
    expectNodeErrorBody(
      await send(adminPort, 'GET /metrics HTTP/1.1', ['host: other.internal.example']),
      403,
      'forbidden',
    );
  });

  it("bound to every address (0.0.0.0): any of the machine's own addresses names it (a kubelet's probe, a scrape by pod IP), a DNS name only when listed", async () => {
    const { adminPort } = await setup({ host: '0.0.0.0' });
    const own = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((a) => a.family === 'IPv4')
      .map((a) => a.address);
    expect(own).toContain('127.0.0.1');
    for (const address of [...own, 'localhost']) {
      expect((await send(adminPort, 'GET /readyz HTTP/1.1', [`host: ${address}:${adminPort}`])).status, address).toBe(
        200,
      );
    }
    expectNodeErrorBody(
      await send(adminPort, 'GET /readyz HTTP/1.1', [`host: 203.0.113.9:${adminPort}`]),
      403,
      'forbidden',
      'an address not of this machine',
    );
    expectNodeErrorBody(
      await send(adminPort, 'GET /readyz HTTP/1.1', ['host: ledger-proxy']),
      403,
      'forbidden',
      'a DNS name not listed',
    );
  });
});

describe('admin.token', () => {
  afterEach(() => {
    delete process.env.LEDGER_PROXY_TEST_ADMIN_TOKEN;
  });

  it('a purge needs it as a Bearer token (401 unauthorized with WWW-Authenticate: Bearer without it); metrics and probes do not', async () => {
    const { adminPort, cached } = await setup({ token: { sha256: TOKEN_SHA256 } });
    const json = 'content-type: application/json';
    for (const authorization of [
      null,
      'Bearer wrong-token',
      `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`,
      TOKEN,
      `Bearer ${TOKEN}x`,
    ]) {
      const reply = await purgeAll(
        adminPort,
        authorization === null ? [json] : [json, `authorization: ${authorization}`],
      );
      expectNodeErrorBody(reply, 401, 'unauthorized', `authorization ${authorization}`);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.body.toString()).not.toContain(TOKEN);
    }
    await stillCached(cached, 'after the purges without the token');
    // The token does not excuse a body of another type.
    expectNodeErrorBody(
      await purgeAll(adminPort, ['content-type: text/plain', `authorization: Bearer ${TOKEN}`]),
      400,
      'web_framework_error',
    );
    const ok = await purgeAll(adminPort, [json, `authorization: bearer ${TOKEN}`]);
    expect(ok.status, ok.body.toString()).toBe(200);
    expect(cacheOf(await cached())).toBe('MISS');
    for (const path of ['/metrics', '/readyz', '/healthz']) {
      expect((await send(adminPort, `GET ${path} HTTP/1.1`, [`host: 127.0.0.1:${adminPort}`])).status, path).toBe(200);
    }
  });

  it('given by an environment variable, as a tenant key is', async () => {
    const { adminPort } = await setup({ token: { env: 'LEDGER_PROXY_TEST_ADMIN_TOKEN' } }, capturedLog(), {
      LEDGER_PROXY_TEST_ADMIN_TOKEN: TOKEN,
    });
    expectNodeErrorBody(await purgeAll(adminPort, ['content-type: application/json']), 401, 'unauthorized');
    expect(
      (await purgeAll(adminPort, ['content-type: application/json', `authorization: Bearer ${TOKEN}`])).status,
    ).toBe(200);
  });

  it('the start log warns once when the admin listener binds a non-loopback address without a token, and only then', async () => {
    const warned = (lines: Array<Record<string, unknown>>): number =>
      lines.filter((l) => l.level === 40 && String(l.msg).includes('admin.token')).length;
    const open = await setup({ host: '0.0.0.0' });
    expect(warned(open.lines), 'on 0.0.0.0 without a token').toBe(1);
    expect(
      (await setup({ host: '0.0.0.0', token: { sha256: TOKEN_SHA256 } })).lines.filter((l) => l.level === 40),
    ).toEqual([]);
    expect(warned((await setup({ host: '127.0.0.1' })).lines), 'on loopback').toBe(0);
    expect(warned((await setup({ host: 'localhost' })).lines), 'on localhost').toBe(0);
  });
});
