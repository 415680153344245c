// The simulated node in its own process (bench target). Calls: counters, resetCounters, fault, clearFaults, ledger,
// universe (the sparse model's accounts, tables and keys per table; null in the period model).
import { startSim } from '../../dist/sim/index.js';
import { childParams, serveRpc } from '../lib/child.mjs';

const params = childParams();
const { startVersion, pruneWindow, ...rest } = params;
const sim = await startSim({
  port: 0,
  versionsPerSecond: 0,
  ...rest,
  ...(startVersion !== undefined ? { startVersion: BigInt(startVersion) } : {}),
  ...(pruneWindow !== undefined ? { pruneWindow: BigInt(pruneWindow) } : {}),
});

serveRpc(
  {
    counters: () => ({ total: sim.counters.total, byRoute: { ...sim.counters.byRoute } }),
    resetCounters: () => sim.counters.reset(),
    fault: (fault) => sim.faults.set(fault),
    clearFaults: () => sim.faults.clear(),
    advance: ({ by = 1 }) => sim.ledger.advance(BigInt(by)),
    ledger: () => {
      const info = sim.ledger.info();
      return { ledgerVersion: String(info.ledgerVersion), oldestLedgerVersion: String(info.oldestLedgerVersion) };
    },
    universe: () => {
      const universe = sim.writes?.universe;
      return universe === undefined
        ? null
        : { accounts: universe.accounts, tables: universe.tables, tableKeys: universe.tableKeys };
    },
    shutdown: () => sim.close(),
  },
  { url: sim.url, pid: process.pid },
);
