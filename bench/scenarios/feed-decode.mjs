// Scenario 9: the change feed's reader, alone on the servers' CPU: pages of
// GET /v1/transactions in BCS shaped like mainnet's (lib/feed-pages.mjs: blocks of user
// transactions with 5-15 written keys and values of 100-500 bytes), each decoded and every
// transaction verified by its hashes. CPU µs per transaction, and transactions per
// CPU-second; then the same with 1 in 10 user transactions signed with a scheme the reader
// does not know, each delimited by its hash instead, and with 1 in 10 whose events hold a
// ContractEvent variant it does not know, delimited by the write set's hash. Mainnet peaks
// near 1,300 versions a second.
import { round } from '../lib/procstat.mjs';
import { meets } from '../lib/report.mjs';

const TARGET = { op: '>=', value: 20_000, formula: 'transactions per CPU-second' };
const UNKNOWN_SHARE = 0.1;

export async function feedDecode(ctx) {
  const { services, mode, log, quiet } = ctx;
  const child = await services.feedDecode({ pages: mode.name === 'quick' ? 3 : 20 });
  const seconds = mode.name === 'quick' ? 0.5 : mode.measureS * 2;
  await quiet('feed: known variants');
  const known = await child.call('run', { seconds });
  await quiet('feed: 1 in 10 unknown');
  const unknown = await child.call('run', { seconds, unknownShare: UNKNOWN_SHARE });
  await quiet('feed: 1 in 10 with unknown events');
  const unknownEvents = await child.call('run', { seconds, unknownEventShare: UNKNOWN_SHARE });
  await services.stop(child);
  const perTx = (r) => r.cpuMicros / r.transactions;
  const perCpuSecond = 1e6 / perTx(known);
  log(
    `  ${known.transactions} transactions: ${perTx(known).toFixed(2)} µs CPU each (${Math.round(perCpuSecond)} per CPU-second, ${Math.round((known.transactions / known.wallMs) * 1000)} per wall second); with 1 in 10 unknown: ${perTx(unknown).toFixed(2)} µs; with 1 in 10 with unknown events: ${perTx(unknownEvents).toFixed(2)} µs`,
  );
  return {
    id: 'feed-decode',
    title: '9. Change feed: transaction pages decoded and verified, per CPU-second',
    measured: Math.round(perCpuSecond),
    unit: 'tx/s',
    target: TARGET,
    pass: meets(perCpuSecond, TARGET),
    display: `${Math.round(perCpuSecond)} (${round(perTx(known), 2)} µs CPU per transaction; pages of 100, ${Math.round(known.pageBytes / 1024)} KiB, ${round(known.writesPerTransaction, 1)} keys per transaction; with 1 in 10 signed by a scheme the reader does not know, delimited by hash: ${round(perTx(unknown), 2)} µs; with 1 in 10 whose events the reader cannot walk: ${round(perTx(unknownEvents), 2)} µs)`,
    raw: { known, unknown, unknownEvents, unknownShare: UNKNOWN_SHARE },
  };
}
