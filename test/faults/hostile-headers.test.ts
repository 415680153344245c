// A node whose answers carry ledger headers it could not have sent: far ahead of
// what its own GET /v1 says (u64 max), or a latest answer whose headers name a
// version 1000 behind the data it holds. Such an answer is not used (not stored,
// not in the watermark, not in the latest floor); the read goes to another node,
// or is a 503 when there is none. The node is counted as misbehaving, and
// quarantined after repeated offences while another node can take its reads.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MISBEHAVING_QUARANTINE_MS, OFFENCES_TO_QUARANTINE } from '../../src/upstream/nodes/misbehaving.js';
import { U64_MAX } from '../../src/wire/u64.js';
import { hex, itemAt, PRESENT_KEYS } from '../helpers/cache.js';
import { metricValue } from '../helpers/metrics.js';
import { ManualProbes } from '../helpers/probes.js';
import { proxy, rawItem, sim, QUIET, versionOf } from '../helpers/proxy.js';

const START = 1_000_004n;

afterEach(() => {
  vi.useRealTimers();
});

describe('a node whose answers carry a ledger version far ahead (u64 max)', () => {
  it('alone: the bad round is 503, and no reply after it carries the far-future version; nothing is stored under it', async () => {
    const node = await sim({ startVersion: START });
    const probes = new ManualProbes();
    const { app, url } = await proxy([node], QUIET, { probeSchedule: probes });
    node.faults.set({ mode: 'headerAhead', routes: ['raw_item'] });
    const bad = [
      await rawItem(url, hex(PRESENT_KEYS[0])),
      await rawItem(url, hex(PRESENT_KEYS[1]), { version: START - 10n }),
      await rawItem(url, hex(PRESENT_KEYS[2])),
    ];
    for (const reply of bad) {
      expect(reply.status, reply.body.toString()).toBe(503);
      expect(reply.headers['x-node-ledger-version']).not.toBe(String(U64_MAX));
    }
    node.faults.clear();
    await probes.round();

    const after = [
      await rawItem(url, hex(PRESENT_KEYS[0])),
      await rawItem(url, hex(PRESENT_KEYS[1]), { version: START - 10n }),
      await rawItem(url, hex(PRESENT_KEYS[1]), { version: START - 10n }),
      await rawItem(url, hex(PRESENT_KEYS[1]), { version: 1 }),
    ];
    // The last is the proxy's own error (pruned): it carries the watermark too.
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 410]);
    expect(after[2].headers['x-cache']).toBe('HIT');
    for (const reply of after) expect(versionOf(reply)).toBeLessThanOrEqual(START);
    const atTheLie = await rawItem(url, hex(PRESENT_KEYS[0]), { version: U64_MAX });
    expect(atTheLie.status, 'served from what the lie stored').toBe(404);
    expect(atTheLie.json().error_code).toBe('version_not_found');
    expect(
      await metricValue(app, 'ledger_proxy_upstream_misbehaving_total', { upstream: 'node0', reason: 'ahead' }),
    ).toBe(3);
    // The last node able to take reads is not quarantined: its lies are refused one by one.
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
  });

  it('beside an honest node: the reads go to the honest one, and the liar is quarantined after repeated offences, then released', async () => {
    const liar = await sim({ startVersion: START });
    const honest = await sim({ startVersion: START });
    const probes = new ManualProbes();
    const { app, url } = await proxy([liar, honest], QUIET, { probeSchedule: probes });
    liar.faults.set({ mode: 'headerAhead', routes: ['raw_item'] });

    for (let i = 0; i < OFFENCES_TO_QUARANTINE; i++) {
      const reply = await rawItem(url, hex(PRESENT_KEYS[i]));
      expect(reply.status, reply.body.toString()).toBe(200);
      expect(versionOf(reply)).toBe(START);
      expect(reply.body.equals(itemAt(PRESENT_KEYS[i], START))).toBe(true);
    }
    expect(liar.counters.byRoute.raw_item).toBe(OFFENCES_TO_QUARANTINE);
    expect(app.pool.health(app.pool.nodes[0])).toBe('quarantined');
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'quarantined' }),
    ).toBe(1);
    const more = await rawItem(url, hex(PRESENT_KEYS[5]));
    expect(more.status).toBe(200);
    expect(liar.counters.byRoute.raw_item, 'a quarantined node gets no reads').toBe(OFFENCES_TO_QUARANTINE);

    liar.faults.clear();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + MISBEHAVING_QUARANTINE_MS + 1);
    await probes.round();
    expect(app.pool.health(app.pool.nodes[0])).toBe('healthy');
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'released' }),
    ).toBe(1);
  });
});

describe('a latest answer whose headers are 1000 versions behind the data it holds', () => {
  it('is not stored as the answer at the version it names: ?ledger_version=<that version> gets the node bytes at it', async () => {
    const node = await sim({ startVersion: START });
    const key = PRESENT_KEYS[0];
    const lie = START - 1000n;
    expect(itemAt(key, lie).equals(itemAt(key, START)), 'the item differs at the two versions').toBe(false);
    const { app, url } = await proxy([node], QUIET);
    node.faults.set({ mode: 'headerBehind', routes: ['raw_item'], count: 1 });

    const latest = await rawItem(url, hex(key));
    expect(latest.status, 'the only node lied: no answer to use').toBe(503);
    const pinned = await rawItem(url, hex(key), { version: lie });
    expect(pinned.status).toBe(200);
    expect(pinned.headers['x-cache']).toBe('MISS');
    expect(pinned.body.equals(itemAt(key, lie))).toBe(true);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_misbehaving_total', { upstream: 'node0', reason: 'behind' }),
    ).toBe(1);
  });

  it('beside an honest node: the latest read is answered by it', async () => {
    const liar = await sim({ startVersion: START });
    const honest = await sim({ startVersion: START });
    const { url } = await proxy([liar, honest], QUIET);
    liar.faults.set({ mode: 'headerBehind', routes: ['raw_item'] });
    const key = PRESENT_KEYS[0];
    const latest = await rawItem(url, hex(key));
    expect(latest.status).toBe(200);
    expect(versionOf(latest)).toBe(START);
    expect(latest.body.equals(itemAt(key, START))).toBe(true);
    expect(liar.counters.byRoute.raw_item).toBe(1);
    expect(honest.counters.byRoute.raw_item).toBe(1);
    const pinned = await rawItem(url, hex(key), { version: START - 1000n });
    expect(pinned.body.equals(itemAt(key, START - 1000n))).toBe(true);
  });
});

describe('a watermark pushed ahead by answers within what the rate allows', () => {
  it('is corrected at the next probe round, when the node reports less than its answers said', async () => {
    const node = await sim({ startVersion: START });
    const probes = new ManualProbes();
    const { app, url } = await proxy([node], QUIET, { probeSchedule: probes });
    // 500 ahead of its probe: within the slack allowed for a chain that moved since.
    node.faults.set({ mode: 'headerAhead', routes: ['raw_item'], versions: 500n, count: 1 });
    const pushed = await rawItem(url, hex(PRESENT_KEYS[0]));
    expect(pushed.status).toBe(200);
    expect(versionOf(pushed)).toBe(START + 500n);
    expect(versionOf(await rawItem(url, hex(PRESENT_KEYS[1]), { version: START - 10n }))).toBe(START + 500n);

    await probes.round();
    for (const reply of [
      await rawItem(url, hex(PRESENT_KEYS[1]), { version: START - 10n }),
      await rawItem(url, hex(PRESENT_KEYS[2]), { version: START - 10n }),
    ]) {
      expect(reply.status).toBe(200);
      expect(versionOf(reply)).toBe(START);
    }
    const latest = await rawItem(url, hex(PRESENT_KEYS[3]));
    expect(versionOf(latest), 'a latest read after the correction').toBe(START);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_misbehaving_total', { upstream: 'node0', reason: 'ahead' }),
    ).toBe(1);
  });
});
