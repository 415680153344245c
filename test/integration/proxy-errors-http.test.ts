// Unknown routes and malformed HTTP through the proxy (api.md §3 and §5):
// every one with its exact status and error body, ledger headers only where api.md
// says so, and the sim's counters proving that bad input never reached the node.
// The proxy probes only at start, so it learns of pruning from answers alone.
import { describe, expect, it } from 'vitest';
import { hex, PRESENT, served } from '../helpers/cache.js';
import { errorBodyOf } from '../helpers/expect.js';
import { call, ledgerHeaders, simBehindProxy } from '../helpers/proxy.js';
import { rawHttp, type RawReply } from '../helpers/raw-socket.js';

describe('proxy errors: routes and malformed HTTP', () => {
  it('an unknown route → 404 JSON error body, not HTML, node not called', async () => {
    const { node, url } = await simBehindProxy();
    const cases: Array<['GET' | 'POST', string]> = [
      ['GET', '/nowhere'],
      ['GET', '/'],
      ['POST', '/v2/view'],
      ['GET', '/index.html'],
      ['POST', '/v1x/view'],
    ];
    for (const [method, path] of cases) {
      const reply = await call(url, path, {
        method,
        headers: { 'content-type': 'application/json', accept: 'text/html' },
        body: method === 'POST' ? '{}' : undefined,
      });
      const body = errorBodyOf(reply, 404, `${method} ${path}`);
      expect(body.error_code).toBe('web_framework_error');
      expect(body.vm_error_code).toBeNull();
      expect(body.message).toContain(path);
      expect(ledgerHeaders(reply)).toEqual({});
    }
    expect(served(node)).toBe(0);
  });

  const rawReply = (port: number, data: Buffer | string): Promise<RawReply> =>
    rawHttp(`http://127.0.0.1:${port}`, data);

  function expectRawInputError(reply: RawReply, label: string): void {
    expect(reply.status, `${label}: ${reply.status} ${reply.body.toString()}`).toBe(400);
    expect(reply.headers['content-type'], label).toBe('application/json');
    expect(reply.headers['x-cache'], label).toBe('BYPASS');
    expect(
      Object.keys(reply.headers).filter((h) => h.startsWith('x-node-')),
      label,
    ).toEqual([]);
    const body = JSON.parse(reply.body.toString('utf8'));
    expect(Object.keys(body).sort(), label).toEqual(['error_code', 'message', 'vm_error_code']);
    expect(body.error_code, label).toBe('web_framework_error');
    expect(body.vm_error_code, label).toBeNull();
    expect(typeof body.message).toBe('string');
    expect(body.message.length).toBeGreaterThan(0);
  }

  it('a broken request line → 400 JSON error body', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const lines = [
      'GARBAGE\r\n\r\n',
      'POST /v1/view HTTP/1.1 extra\r\nHost: x\r\n\r\n',
      'POST /v1/view HTTP/9\r\nHost: x\r\n\r\n',
      'P@ST /v1/view HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /v1/vi ew HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /v1/view HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n',
    ];
    for (const line of lines) expectRawInputError(await rawReply(port, line), JSON.stringify(line));
    expect(served(node)).toBe(0);
  });

  it('HTTP/1.1 without Host, or an Expect other than 100-continue → 400 JSON error body (never 417)', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const json = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] });
    const post = (version: string, headers: string): string =>
      `POST /v1/view ${version}\r\n${headers}content-type: application/json\r\ncontent-length: ${json.length}\r\nconnection: close\r\n\r\n${json}`;
    const noHost = await rawReply(port, post('HTTP/1.1', ''));
    expectRawInputError(noHost, 'no Host');
    expect(JSON.parse(noHost.body.toString()).message).toContain('Host');
    const expectation = await rawReply(port, post('HTTP/1.1', 'Host: x\r\nexpect: something-else\r\n'));
    expectRawInputError(expectation, 'Expect');
    expect(JSON.parse(expectation.body.toString()).message).toContain('Expect');
    expect(node.counters.byRoute.view).toBe(0);
    // HTTP/1.0 needs no Host.
    const old = await rawReply(port, post('HTTP/1.0', ''));
    expect(old.status).toBe(200);
    expect(old.body.toString()).toBe('["3"]');
    expect(node.counters.byRoute.view).toBe(1);
  });

  it('bad %-encoding in the path → 400 JSON error body', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const body = JSON.stringify({ key: hex(PRESENT) });
    const paths = [
      `/v1/tables/%zz/raw_item`,
      `/v1/tables/0x1%/raw_item`,
      `/v1/tables/%E0%A4%A/raw_item`,
      `/v1/tables/0x1%C3/raw_item`,
    ];
    for (const path of paths) {
      const request =
        `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\naccept: application/x-bcs\r\n` +
        `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
      expectRawInputError(await rawReply(port, request), path);
    }
    expect(served(node)).toBe(0);
  });

  it('oversized headers (> 16 KiB) → 400 JSON error body, never 431', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const request = `GET /v1 HTTP/1.1\r\nHost: x\r\nx-filler: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    expectRawInputError(await rawReply(port, request), 'header overflow');
    const many = `POST /v1/view HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 400 }, (_, i) => `x-h${i}: ${'b'.repeat(60)}\r\n`).join('')}\r\n`;
    expectRawInputError(await rawReply(port, many), 'many headers');
    expect(served(node)).toBe(0);
  });

  it('invalid chunked framing → 400 JSON error body, node not called', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const head =
      'POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';
    const bodies = ['zz\r\n{}\r\n0\r\n\r\n', '5\r\n{}\r\n0\r\n\r\n', '2\r\n{}XX0\r\n\r\n', '-1\r\n'];
    for (const body of bodies) expectRawInputError(await rawReply(port, head + body), JSON.stringify(body));
    // Both Content-Length and chunked: a request smuggling shape, refused.
    const both =
      'POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n';
    expectRawInputError(await rawReply(port, both), 'content-length and chunked');
    expect(node.counters.byRoute.view).toBe(0);
    expect(served(node)).toBe(0);
  });

  it('a well-formed chunked request on a raw socket is served (the node gets Content-Length)', async () => {
    const { node, url } = await simBehindProxy();
    const port = Number(new URL(url).port);
    const json = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });
    const chunked = `${(10).toString(16)}\r\n${json.slice(0, 10)}\r\n${(json.length - 10).toString(16)}\r\n${json.slice(10)}\r\n0\r\n\r\n`;
    const reply = await rawReply(
      port,
      `POST /v1/view HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n${chunked}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.toString()).toBe('["42"]');
    expect(node.counters.byRoute.view).toBe(1);
    const reached = node.counters.requests.find((r) => r.url === '/v1/view')!;
    expect(reached.headers['content-length']).toBe(String(json.length));
    expect(reached.headers['transfer-encoding']).toBeUndefined();
  });
});
