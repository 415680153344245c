// Scenario 9: the change feed's reader (dist/writes/page.js) decoding and verifying pages
// of GET /v1/transactions in BCS, built by lib/feed-pages.mjs, on this process's one CPU.
// BENCH_PARAMS: { pages }. Calls: run({ seconds, unknownShare, unknownEventShare }).
import { decodeTransactionPage } from '../../dist/writes/page.js';
import { childParams, cpuMicros, serveRpc } from '../lib/child.mjs';
import { feedPages } from '../lib/feed-pages.mjs';

const { pages: count = 20 } = childParams();

serveRpc({
  /** Decodes the pages round and round for `seconds` (after a warm-up of as long): CPU and wall time per transaction. */
  async run({ seconds, unknownShare = 0, unknownEventShare = 0 }) {
    const pages = feedPages({ pages: count, unknownShare, unknownEventShare });
    const round = () => {
      let transactions = 0;
      let writes = 0;
      for (const p of pages) {
        for (const t of decodeTransactionPage(p.body, p.start)) {
          transactions++;
          writes += t.writes.length;
        }
      }
      return { transactions, writes };
    };
    for (const until = performance.now() + seconds * 1000; performance.now() < until; ) round();
    let transactions = 0;
    let writes = 0;
    const cpu0 = cpuMicros();
    const start = performance.now();
    while (performance.now() - start < seconds * 1000) {
      const r = round();
      transactions += r.transactions;
      writes += r.writes;
    }
    return {
      transactions,
      writesPerTransaction: writes / transactions,
      cpuMicros: cpuMicros() - cpu0,
      wallMs: performance.now() - start,
      pageBytes: pages.reduce((n, p) => n + p.body.length, 0) / pages.length,
    };
  },
});
