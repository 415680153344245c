// Request bodies as the public entry reads them: the node gets the client's own
// bytes, a body sent in pieces is waited for, and a body cut short gets a 400.
import { describe, expect, it } from 'vitest';
import { call, HANDLE, proxy, rawItem, sim, QUIET } from '../helpers/proxy.js';
import { rawExchange, rawReplies } from '../helpers/raw-socket.js';

const KEY_BODY = '{"key":"0x0000000000000007"}';

describe('request bodies', () => {
  it("a miss sends the node the client's own body bytes", async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    const spaced = '{ "key" : "0x0000000000000009" }';
    const reply = await call(p.url, `/v1/tables/${HANDLE}/raw_item?ledger_version=991`, {
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: spaced,
    });
    expect(reply.headers['x-cache']).toBe('MISS');
    const sent = node.counters.requests.filter((r) => r.url.includes('/raw_item'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.toString('latin1')).toBe(spaced);
  });

  it('wait for a body sent in pieces, and answer a body cut short with a 400', async () => {
    const node = await sim({ startVersion: 1000n });
    const p = await proxy([node], QUIET);
    await rawItem(p.url, '0x0000000000000007', { version: 990 });
    const port = Number(new URL(p.url).port);
    const head = (length: number): string =>
      `POST /v1/tables/${HANDLE}/raw_item?ledger_version=990 HTTP/1.1\r\nHost: proxy.test\r\nContent-Type: application/json\r\n` +
      `Accept: application/x-bcs\r\nContent-Length: ${length}\r\n\r\n`;

    const pieces = await new Promise<Buffer>((resolve, reject) => {
      import('node:net').then(({ connect }) => {
        const socket = connect(port, '127.0.0.1');
        const got: Buffer[] = [];
        socket.on('data', (d) => got.push(d));
        socket.on('end', () => resolve(Buffer.concat(got)));
        socket.on('error', reject);
        socket.write(
          head(KEY_BODY.length).replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n') + KEY_BODY.slice(0, 10),
        );
        // The rest of the body 50 ms later: the proxy waits for it.
        setTimeout(() => socket.write(KEY_BODY.slice(10)), 50);
      }, reject);
    });
    const [whole] = rawReplies(pieces, true);
    expect(whole?.status).toBe(200);
    expect(whole?.headers['x-cache']).toBe('HIT');

    const cut = await rawExchange(port, head(KEY_BODY.length) + KEY_BODY.slice(0, 10), {
      halfCloseAtOnce: true,
      timeoutMs: 2000,
    });
    expect(cut.reply?.status, `closed without a reply: ${cut.closedWithoutReply}`).toBe(400);
    expect(JSON.parse(cut.reply!.body.toString('utf8'))).toMatchObject({
      error_code: 'web_framework_error',
      vm_error_code: null,
    });
  });
});
