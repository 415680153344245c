// A body a node refuses (a form feed or vertical tab where
// JSON allows only space, tab, LF and CR) is never a cache hit and never
// forwarded: the proxy answers 400 web_framework_error itself.
import { describe, expect, it } from 'vitest';
import { cacheOf, expectStatus, hex, PRESENT, served } from '../helpers/cache.js';
import { call, HANDLE, proxy, rawItem, sim } from '../helpers/proxy.js';

const V = 990;

function rawItemWith(url: string, body: string, version: number) {
  return call(url, `/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`, {
    headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
    body,
  });
}

describe('JSON whitespace the node refuses', () => {
  for (const ws of ['\f', '\v']) {
    const name = JSON.stringify(ws);
    it(`${name} before a cached raw_item body is a 400, not a HIT`, async () => {
      const node = await sim();
      const { url } = await proxy([node]);
      const first = await rawItem(url, hex(PRESENT), { version: V });
      expectStatus(first, 200);
      const again = await rawItem(url, hex(PRESENT), { version: V });
      expect(cacheOf(again)).toBe('HIT memory');

      const refused = await rawItemWith(url, `${ws}{"key":"${hex(PRESENT)}"}`, V);
      expectStatus(refused, 400);
      expect(refused.json().error_code).toBe('web_framework_error');
      expect(refused.headers['x-cache']).not.toBe('HIT');
    });

    it(`${name} in an uncached raw_item body is a 400 that never reaches the node`, async () => {
      const node = await sim();
      const { url } = await proxy([node]);
      const before = served(node);
      const refused = await rawItemWith(url, `{"key":${ws}"${hex(PRESENT)}"}${ws}`, V - 1);
      expectStatus(refused, 400);
      expect(refused.json().error_code).toBe('web_framework_error');
      expect(served(node)).toBe(before);
    });
  }
});
