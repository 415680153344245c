// The wallet figure's yardstick: how many node calls an ORACLE would make for the
// very requests the bench sent (their send times and reads, recorded by the load
// generator). The oracle is an infinite cache with perfect coalescing and the
// proxy's staleness window:
//   - A read is (form, item, pinned | latest); form is raw_item, view JSON→JSON or
//     view BCS→BCS (different answers, so different node calls).
//   - A pinned read costs one node call the first time its (form, item) is seen,
//     in the warm-up or the measured window, and never again (infinite cache).
//   - A latest read of (form, item) sent at t costs nothing if the oracle's last
//     node call for that latest read started at t0 with t − t0 ≤ inflightMs +
//     windowMs: inflightMs is how long a node call takes (a read arriving while one
//     is in flight joins it: perfect coalescing), windowMs the staleness window
//     (latest.maxStalenessMs; 0 with the defaults). Otherwise it costs one call.
//   - The ledger does not advance during the bench and pinned reads name the
//     version latest reads are answered at, so a latest read's answer also fills
//     the pinned entry of its (form, item), as the proxy stores it.
// Node calls are counted for the measured window only (the last trace); earlier
// traces warm the oracle as the warm-up warmed the proxy.

/** A read's code in a trace: ((form × items) + item) × 2 + (latest ? 1 : 0). */
export function readCode(form, item, latest, items) {
  return (form * items + item) * 2 + (latest ? 1 : 0);
}

/** traces: [{ codes: number[], times: number[] (ms, one clock) }, …] in time order. */
export function oracleNodeCalls(traces, { windowMs, inflightMs }) {
  const seen = new Set();
  const lastCall = new Map();
  let pinned = 0;
  let latest = 0;
  let reads = 0;
  traces.forEach((trace, ti) => {
    const counting = ti === traces.length - 1;
    const { codes, times } = trace;
    for (let i = 0; i < codes.length; i++) {
      const code = codes[i];
      const id = code >>> 1;
      if (counting) reads++;
      if ((code & 1) === 0) {
        if (!seen.has(id)) {
          seen.add(id);
          if (counting) pinned++;
        }
        continue;
      }
      const t0 = lastCall.get(id);
      if (t0 !== undefined && times[i] - t0 <= inflightMs + windowMs) continue;
      lastCall.set(id, times[i]);
      seen.add(id);
      if (counting) latest++;
    }
  });
  return { nodeCalls: pinned + latest, pinnedCalls: pinned, latestCalls: latest, reads };
}
