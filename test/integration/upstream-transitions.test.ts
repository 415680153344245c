// Node state changes in the log and the metrics: each change (down, up, circuit
// open and closed, quarantined and released, lagging and caught up, a chain
// adopted) is logged once when it happens, at warn when it is for the worse and
// at info when it is for the better, with the node's name, however many probe
// rounds see the same state; ledger_proxy_upstream_transitions_total counts them.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { metricValue } from '../helpers/metrics.js';
import { ManualProbes } from '../helpers/probes.js';
import { proxy, rawItem, sim, QUIET_ROUTING } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

interface Line {
  level: number;
  msg: string;
  upstream?: string;
  transition?: string;
}

const WARN = 40;
const INFO = 30;

async function setup() {
  const a = await sim({ startVersion: 1000n });
  const b = await sim({ startVersion: 1000n });
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const probes = new ManualProbes();
  const routing = { ...QUIET_ROUTING, maxLagVersions: 100, breaker: { failureThreshold: 2, openMs: 200 } };
  const { app, url } = await proxy([a, b], { routing }, { probeSchedule: probes, logger });
  /** The transitions logged so far, as "node:transition@level". */
  const logged = (): string[] =>
    lines.filter((l) => l.transition !== undefined).map((l) => `${l.upstream}:${l.transition}@${l.level}`);
  const rounds = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await probes.round();
  };
  return { a, b, app, url, logged, rounds };
}

describe('node state changes: each logged once, and counted', () => {
  it('down and up, circuit open and closed', async () => {
    const { a, app, logged, rounds } = await setup();
    expect(logged()).toEqual([`node0:up@${INFO}`, `node1:up@${INFO}`]);

    await a.stop();
    await rounds(3);
    // Probes that fail count against the circuit, which opens after two of them.
    expect(logged().slice(2)).toEqual([`node0:down@${WARN}`, `node0:breaker_open@${WARN}`]);

    await a.restart();
    await until(() => app.pool.nodes[0].circuit() === 'half-open', 2000, 'the circuit to be due for a trial');
    await rounds(3);
    expect(logged().slice(4)).toEqual([`node0:breaker_closed@${INFO}`, `node0:up@${INFO}`]);
    for (const [state, count] of Object.entries({ up: 2, down: 1, breaker_open: 1, breaker_closed: 1 })) {
      expect(
        await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state }),
        state,
      ).toBe(count);
    }
  });

  it('a circuit opened by failing reads, and closed by a trial read', async () => {
    const { a, url, app, logged } = await setup();
    a.faults.set({ mode: 'status500', routes: ['raw_item'] });
    for (let i = 0; i < 4; i++) await rawItem(url, '0x01', { version: 990 + i });
    expect(logged().slice(2)).toEqual([`node0:breaker_open@${WARN}`]);
    a.faults.clear();
    await until(() => app.pool.nodes[0].circuit() === 'half-open', 2000, 'the circuit to be due for a trial');
    for (let i = 0; i < 4; i++) await rawItem(url, '0x01', { version: 980 + i });
    expect(logged().slice(2)).toEqual([`node0:breaker_open@${WARN}`, `node0:breaker_closed@${INFO}`]);
  });

  it('lagging and caught up; quarantined for another chain and released; a chain adopted', async () => {
    const { a, b, app, logged, rounds } = await setup();
    b.ledger.advance(500);
    await rounds(3);
    expect(logged().slice(2)).toEqual([`node0:lagging@${WARN}`]);
    a.ledger.advance(500);
    await rounds(2);
    expect(logged().slice(3)).toEqual([`node0:caught_up@${INFO}`]);

    a.ledger.setChainId(5);
    await rounds(3);
    expect(logged().slice(4)).toEqual([`node0:quarantined@${WARN}`]);
    a.ledger.setChainId(4);
    await rounds(2);
    expect(logged().slice(5)).toEqual([`node0:released@${INFO}`]);

    a.ledger.setChainId(6);
    b.ledger.setChainId(6);
    await rounds(3);
    expect(app.pool.chainId()).toBe(6);
    expect(await metricValue(app, 'ledger_proxy_upstream_transitions_total', { state: 'chain_adopted' })).toBe(1);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'quarantined' }),
    ).toBe(2);
    expect(
      await metricValue(app, 'ledger_proxy_upstream_transitions_total', { upstream: 'node0', state: 'lagging' }),
    ).toBe(1);
  });
});
