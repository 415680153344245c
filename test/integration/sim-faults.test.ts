// The simulated node's test controls: request counters, every fault mode, and the
// stop / restart / close lifecycle ("down" is stop()).
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSim, type SimNode } from '../../src/sim/index.js';
import { until } from '../helpers/until.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function call(
  sim: SimNode,
  path: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; headersTimeout?: number } = {},
): Promise<Answer> {
  const res = await request(sim.url + path, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    headersTimeout: init.headersTimeout,
  });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

const VIEW = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['1', '2'] }),
};

describe('simulated node controls', () => {
  let sim: SimNode;
  beforeEach(async () => {
    sim = await startSim();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await sim.close();
  });

  describe('counters', () => {
    it('counts every request by route and records method, url, headers and body', async () => {
      await call(sim, '/v1');
      await call(sim, '/v1/view?ledger_version=1000', VIEW);
      await call(sim, '/v1/accounts/0x1/module/sim');
      await call(sim, `/v1/tables/0x1/raw_item`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: '{"key":"0x01"}',
      });
      await call(sim, '/nowhere');
      expect(sim.counters.total).toBe(5);
      expect(Object.fromEntries(Object.entries(sim.counters.byRoute).filter(([, n]) => n > 0))).toEqual({
        raw_item: 1,
        view: 1,
        ledger_info: 1,
        module: 1,
        other: 1,
      });
      const view = sim.counters.requests[1];
      expect(view.method).toBe('POST');
      expect(view.url).toBe('/v1/view?ledger_version=1000');
      expect(view.headers['content-type']).toBe('application/json');
      expect(view.body.toString()).toBe(VIEW.body);

      sim.counters.reset();
      expect(sim.counters.total).toBe(0);
      expect(Object.values(sim.counters.byRoute).every((n) => n === 0)).toBe(true);
      expect(sim.counters.requests).toEqual([]);
    });
  });

  describe('faults', () => {
    it("'html' answers 502 text/html and is counted", async () => {
      sim.faults.set({ mode: 'html' });
      const answer = await call(sim, '/v1', { headers: { 'accept-encoding': 'gzip' } });
      expect(answer.status).toBe(502);
      expect(answer.headers['content-type']).toBe('text/html');
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(answer.body.toString()).toBe('<html><body>Bad Gateway</body></html>');
      expect(sim.counters.total).toBe(1);
    });

    it("'status500' answers the node's JSON internal_error body with ledger headers", async () => {
      sim.faults.set({ mode: 'status500' });
      const answer = await call(sim, '/v1/view', VIEW);
      expect(answer.status).toBe(500);
      expect(answer.headers['content-type']).toBe('application/json');
      expect(JSON.parse(answer.body.toString())).toEqual({
        message: 'Internal error: simulated failure',
        error_code: 'internal_error',
        vm_error_code: null,
      });
      expect(answer.headers['x-node-ledger-version']).toBe('1000');
    });

    it("'status429' answers 429 text/plain and 'empty' 503 with no body", async () => {
      sim.faults.set({ mode: 'status429' });
      const limited = await call(sim, '/v1');
      expect([limited.status, limited.headers['content-type'], limited.body.toString()]).toEqual([
        429,
        'text/plain',
        'Too Many Requests',
      ]);
      sim.faults.set({ mode: 'empty' });
      const empty = await call(sim, '/v1');
      expect([empty.status, empty.headers['content-type'], empty.body.length]).toEqual([503, undefined, 0]);
    });

    it("'overloaded' answers as a node's memory admission gate: 503 overloaded, plain JSON, on every path but /-/healthy", async () => {
      sim.faults.set({ mode: 'overloaded', count: 3 });
      const shedBody = {
        message: 'Server is shedding load; please retry shortly',
        error_code: 'overloaded',
        vm_error_code: null,
      };
      for (const [path, init] of [
        ['/v1', {}],
        ['/v1/view', VIEW],
      ] as const) {
        const shed = await call(sim, path, {
          ...init,
          headers: {
            ...('headers' in init ? init.headers : {}),
            'accept-encoding': 'gzip',
            origin: 'https://wallet.example',
          },
        });
        expect([shed.status, shed.headers['content-type'], JSON.parse(shed.body.toString())], path).toEqual([
          503,
          'application/json',
          shedBody,
        ]);
        expect(shed.headers['x-node-ledger-version'], path).toBeUndefined();
        expect(shed.headers['retry-after'], path).toBeUndefined();
        expect(shed.headers['content-encoding'], path).toBeUndefined();
      }
      // The health check passes the gate, and uses up none of the count.
      const healthy = await call(sim, '/v1/-/healthy');
      expect(healthy.status).not.toBe(503);
      expect((await call(sim, '/v1')).status).toBe(503);
      expect((await call(sim, '/v1')).status).toBe(200);

      sim.faults.set({ mode: 'overloaded', retryAfterSeconds: 2 });
      const told = await call(sim, '/v1');
      expect([told.status, told.headers['retry-after']]).toEqual([503, '2']);
      expect(() => sim.faults.set({ mode: 'overloaded', retryAfterSeconds: -1 })).toThrow(RangeError);
    });

    it("'reset' destroys the connection without an answer", async () => {
      sim.faults.set({ mode: 'reset' });
      await expect(call(sim, '/v1/view', VIEW)).rejects.toThrow();
      expect(sim.counters.byRoute.view).toBe(1);
      sim.faults.clear();
      expect((await call(sim, '/v1/view', VIEW)).status).toBe(200);
    });

    it("'slow' answers normally after delayMs", async () => {
      sim.faults.set({ mode: 'slow', delayMs: 150 });
      const started = performance.now();
      const answer = await call(sim, '/v1/view', VIEW);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body.toString())).toEqual(['3']);
    });

    it("'hang' never answers: the client times out, and stop() destroys the socket", async () => {
      sim.faults.set({ mode: 'hang' });
      await expect(call(sim, '/v1', { headersTimeout: 200 })).rejects.toMatchObject({
        code: 'UND_ERR_HEADERS_TIMEOUT',
      });
      const pending = call(sim, '/v1/view', VIEW);
      pending.catch(() => undefined);
      await until(
        () => sim.counters.total === 2,
        5000,
        () => `the view at the sim (counted ${sim.counters.total} requests)`,
      );
      await sim.stop();
      await expect(pending).rejects.toThrow();
    });

    it("'gzipBomb' sends the answer's headers with gzip members of zeros: a few KiB per MiB decoded", async () => {
      sim.faults.set({ mode: 'gzipBomb', bytes: 8 * 1024 * 1024 });
      const answer = await call(sim, '/v1/view', VIEW);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding']).toBe('gzip');
      expect(answer.headers['x-node-ledger-version']).toBe('1000');
      expect(answer.body.length).toBeLessThan(64 * 1024);
      const decoded = gunzipSync(answer.body);
      expect(decoded.length).toBe(8 * 1024 * 1024);
      expect(decoded.every((b) => b === 0)).toBe(true);
    });

    it("'hugeBody' sends the answer's headers with bytes of body, not compressed", async () => {
      sim.faults.set({ mode: 'hugeBody', bytes: 3 * 1024 * 1024 + 5 });
      const answer = await call(sim, '/v1/view', { ...VIEW, headers: { ...VIEW.headers, 'accept-encoding': 'gzip' } });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(answer.headers['content-length']).toBe(String(3 * 1024 * 1024 + 5));
      expect(answer.body.length).toBe(3 * 1024 * 1024 + 5);
    });

    it("'endlessBody' sends the answer, then spaces a piece at a time, and never ends", async () => {
      sim.faults.set({ mode: 'endlessBody', bytes: 100 });
      const res = await request(sim.url + '/v1/view', VIEW);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['x-node-ledger-version']).toBe('1000');
      let received = Buffer.alloc(0);
      for await (const chunk of res.body) {
        received = Buffer.concat([received, chunk as Buffer]);
        // The answer and several pieces came, and it goes on.
        if (received.length >= 5 + 5 * 100) break;
      }
      expect(received.subarray(0, 5).toString()).toBe('["3"]');
      expect(received.subarray(5).every((b) => b === 0x20)).toBe(true);
    });

    it("'headerAhead' moves only the ledger version header: to u64 max, or by versions", async () => {
      sim.faults.set({ mode: 'headerAhead' });
      const far = await call(sim, '/v1/view', VIEW);
      expect(far.headers['x-node-ledger-version']).toBe('18446744073709551615');
      expect(far.headers['x-node-block-height']).toBe('250');
      expect(JSON.parse(far.body.toString())).toEqual(['3']);
      sim.faults.set({ mode: 'headerAhead', versions: 7n });
      expect((await call(sim, '/v1/view', VIEW)).headers['x-node-ledger-version']).toBe('1007');
    });

    it("'headerBehind' gives the answer the seven headers of an older snapshot, its data unchanged", async () => {
      sim.ledger.advance(2000);
      sim.faults.set({ mode: 'headerBehind' });
      const behind = await call(sim, '/v1/view', VIEW);
      expect(behind.headers['x-node-ledger-version']).toBe('2000');
      expect(behind.headers['x-node-block-height']).toBe('500');
      expect(behind.headers['x-node-ledger-timestampusec']).toBe(String(sim.ledger.timestampAt(2000n)));
      expect(JSON.parse(behind.body.toString())).toEqual(['3']);
      sim.faults.set({ mode: 'headerBehind', versions: 10n });
      expect((await call(sim, '/v1/view', VIEW)).headers['x-node-ledger-version']).toBe('2990');
    });

    it("'wrongBody' gives other data of the same shape, status and headers unchanged", async () => {
      const honest = await call(sim, '/v1/view', VIEW);
      sim.faults.set({ mode: 'wrongBody' });
      const json = await call(sim, '/v1/view', VIEW);
      expect(json.status).toBe(200);
      expect(json.headers['x-node-ledger-version']).toBe(honest.headers['x-node-ledger-version']);
      expect(JSON.parse(json.body.toString())).toEqual(['4']);
      const rawItem = {
        method: 'POST' as const,
        headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
        body: '{"key":"0x005a"}',
      };
      const lie = await call(sim, '/v1/tables/0x1/raw_item', rawItem);
      sim.faults.clear();
      const truth = await call(sim, '/v1/tables/0x1/raw_item', rawItem);
      expect([lie.status, lie.body.length]).toEqual([truth.status, truth.body.length]);
      expect(lie.body.equals(truth.body)).toBe(false);
    });

    it('faults only the chosen routes, and only the next count requests', async () => {
      sim.faults.set({ mode: 'status500', routes: ['view'], count: 2 });
      expect((await call(sim, '/v1')).status).toBe(200);
      expect((await call(sim, '/v1/view', VIEW)).status).toBe(500);
      expect((await call(sim, '/v1/view', VIEW)).status).toBe(500);
      expect((await call(sim, '/v1/view', VIEW)).status).toBe(200);
      expect(sim.counters.byRoute).toMatchObject({ view: 3, ledger_info: 1 });
    });
  });

  describe('lifecycle', () => {
    it('stop() refuses connections; restart() serves again on the same port with the same ledger', async () => {
      const { url, port } = sim;
      sim.ledger.advance(5);
      await sim.stop();
      await expect(call(sim, '/v1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await sim.restart();
      expect([sim.url, sim.port]).toEqual([url, port]);
      const answer = await call(sim, '/v1');
      expect(answer.status).toBe(200);
      expect(answer.headers['x-node-ledger-version']).toBe('1005');
    });

    it('close() is for good: restart() is refused afterwards, and close() twice is fine', async () => {
      await sim.close();
      await expect(sim.restart()).rejects.toThrow(/closed/);
      await sim.close();
    });

    it('advances on its own at versionsPerSecond', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      const ticking = await startSim({ versionsPerSecond: 2, startVersion: 0n });
      try {
        vi.advanceTimersByTime(3000);
        expect(ticking.ledger.info().ledgerVersion).toBe(6n);
      } finally {
        await ticking.close();
      }
    });
  });
});
