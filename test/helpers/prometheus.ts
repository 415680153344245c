// Reading the Prometheus text format a /metrics scrape answers, in tests: its
// samples (name, labels, value) and the metric names its # TYPE lines declare.
import { expect } from 'vitest';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format → samples (comments skipped); a line that is not a sample fails. */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (m === null) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      for (const l of m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    }
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The metric names the text declares (its # TYPE lines). */
export function declaredMetrics(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

/** The samples of `name` whose labels include `labels`. */
export function samples(all: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with exactly these labels, or undefined; two such samples fail. */
export function sampleValue(all: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hit = all.filter(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  expect(hit.length, `${name}${JSON.stringify(labels)} appears at most once`).toBeLessThanOrEqual(1);
  return hit[0]?.value;
}

/** The values of `name` by the value of its label `label` (ledger_proxy_purges_total by scope). */
export function valuesByLabel(all: Sample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples(all, name)) {
    const key = s.labels[label];
    if (key !== undefined) out[key] = s.value;
  }
  return out;
}
