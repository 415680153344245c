// Reloading the config (what SIGHUP does): the upstream list changes without
// dropping a request, a 'sim' upstream it adds starts the built-in node, reloads
// are serialised, and every changed key is reported as applied or as needing a
// restart.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/index.js';
import { capturedLog, freePort, proxy, sim, viewJson } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

describe('upstream reload', () => {
  it('finishes requests in flight on a removed node, and sends new ones to the new list', async () => {
    const old = await sim();
    const fresh = await sim();
    old.faults.set({ mode: 'slow', delayMs: 500, routes: ['view'] });
    const p = await proxy([old]);
    const inFlight = Array.from({ length: 10 }, (_, i) => viewJson(p.url, '0x1::sim::add', [String(i), '1']));
    // All ten reached the old node (it holds them for 500 ms) before the reload.
    await until(
      () => old.counters.byRoute.view >= 10,
      2000,
      () => `ten views at the old node (${old.counters.byRoute.view} so far)`,
    );
    expect(old.counters.byRoute.view).toBe(10);
    const upstreams = parseConfig({ upstreams: [{ url: fresh.url, name: 'fresh' }] }).upstreams;
    const result = await p.app.reload({ ...p.app.config, upstreams });
    expect(result).toEqual({ applied: ['upstreams'], needRestart: [], failed: [] });
    expect(p.app.pool.nodes.map((n) => n.name)).toEqual(['fresh']);
    const replies = await Promise.all(inFlight);
    replies.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.json()).toEqual([String(i + 1)]);
    });
    expect(old.counters.byRoute.view).toBe(10);
    const after = await viewJson(p.url, '0x1::sim::add', ['5', '5']);
    expect(after.json()).toEqual(['10']);
    expect(fresh.counters.byRoute.view).toBe(1);
    expect(old.counters.byRoute.view).toBe(10);
  });

  it('keeps the state of nodes that stay', async () => {
    const a = await sim();
    const b = await sim();
    const p = await proxy([a]);
    const before = p.app.pool.nodes[0];
    await p.app.reload({
      ...p.app.config,
      upstreams: parseConfig({
        upstreams: [
          { url: a.url, name: 'node0' },
          { url: b.url, name: 'b' },
        ],
      }).upstreams,
    });
    expect(p.app.pool.nodes[0]).toBe(before);
    expect(p.app.pool.nodes.map((n) => n.name)).toEqual(['node0', 'b']);
    expect(p.app.pool.nodes[1].ledger).not.toBeNull();
  });
});

describe("a reload that adds a 'sim' upstream", () => {
  it('starts the built-in node, and reads go to it', async () => {
    const real = await sim();
    const p = await proxy([real], { sim: { host: '127.0.0.1', port: 0 } });
    expect(p.app.sim).toBeUndefined();
    const upstreams = parseConfig({ upstreams: [{ url: 'sim' }] }).upstreams;
    expect(await p.app.reload({ ...p.app.config, upstreams })).toEqual({
      applied: ['upstreams'],
      needRestart: [],
      failed: [],
    });
    const builtIn = p.app.sim!;
    expect(p.app.pool.nodes.map((n) => [n.name, n.client.url])).toEqual([['sim', builtIn.url]]);
    expect((await viewJson(p.url, '0x1::sim::add', ['2', '40'])).json()).toEqual(['42']);
    expect(builtIn.counters.byRoute.view).toBe(1);
    expect(real.counters.byRoute.view ?? 0).toBe(0);
  });

  it('that cannot start (sim.port in use) is not applied, says why by key, and the running upstreams stay', async () => {
    const real = await sim();
    const taken = await sim({ port: await freePort() });
    const { logger, lines } = capturedLog();
    const p = await proxy([real], { sim: { host: '127.0.0.1', port: Number(new URL(taken.url).port) } }, { logger });
    const upstreams = parseConfig({ upstreams: [{ url: 'sim' }] }).upstreams;
    expect(await p.app.reload({ ...p.app.config, upstreams })).toEqual({
      applied: [],
      needRestart: [],
      failed: ['upstreams'],
    });
    const refused = lines.find((l) => l.key === 'upstreams' && l.level === 50);
    expect((refused?.err as { message?: string })?.message).toMatch(/^sim\.port: cannot listen on 127\.0\.0\.1:\d+/);
    expect(p.app.pool.nodes.map((n) => n.name)).toEqual(['node0']);
    expect((await viewJson(p.url, '0x1::sim::add', ['1', '1'])).json()).toEqual(['2']);
    expect(real.counters.byRoute.view).toBe(1);
  });
});

describe('config reload', () => {
  it('two reloads close together run one after the other', async () => {
    const [a, b, c] = [await sim(), await sim(), await sim()];
    // b's first probe is slow, so the first reload is still running when the second comes.
    b.faults.set({ mode: 'slow', delayMs: 300, routes: ['ledger_info'], count: 1 });
    const p = await proxy([a]);
    const events: string[] = [];
    const pool = p.app.pool;
    const replace = pool.replaceNodes.bind(pool);
    const spy = vi.spyOn(pool, 'replaceNodes').mockImplementation(async (next) => {
      const names = next.map((n) => n.name).join(',');
      events.push(`start ${names}`);
      const result = await replace(next);
      events.push(`end ${names}`);
      return result;
    });
    try {
      const with_ = (url: string, name: string) => ({
        ...p.app.config,
        upstreams: parseConfig({ upstreams: [{ url, name }] }).upstreams,
      });
      const [first, second] = await Promise.all([p.app.reload(with_(b.url, 'b')), p.app.reload(with_(c.url, 'c'))]);
      expect(first.applied).toEqual(['upstreams']);
      expect(second.applied).toEqual(['upstreams']);
      expect(events).toEqual(['start b', 'end b', 'start c', 'end c']);
      expect(pool.nodes.map((n) => n.name)).toEqual(['c']);
    } finally {
      spy.mockRestore();
    }
  });

  it('logs each changed key as applied or as needing a restart, and applies log.level live', async () => {
    const node = await sim();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 },
      upstreams: [{ url: node.url, name: 'node0' }],
    });
    const app = await buildApp(config, { logger });
    try {
      const next = {
        ...config,
        log: { ...config.log, level: 'warn' as const },
        cache: { ...config.cache, memory: { ...config.cache.memory, maxBytes: 1024 } },
      };
      const outcome = await app.reload(next);
      expect(outcome).toEqual({ applied: ['log.level'], needRestart: ['cache.memory.maxBytes'], failed: [] });
      expect(logger.level).toBe('warn');
      const restart = lines.find((l) => l.key === 'cache.memory.maxBytes');
      expect(restart?.msg).toMatch(/restart/);
      // Reloading the same file again changes nothing live, and still reports the pending restart.
      expect(await app.reload(next)).toEqual({ applied: [], needRestart: ['cache.memory.maxBytes'], failed: [] });
    } finally {
      await app.close();
    }
  });
});
