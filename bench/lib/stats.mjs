// Percentiles (nearest rank) of latency samples in ms.
export function percentiles(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (p) =>
    sorted.length === 0
      ? null
      : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    samples: sorted.length,
    mean: sorted.length ? sum / sorted.length : null,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: sorted.length ? sorted[sorted.length - 1] : null,
  };
}
