// The bench's outputs: bench/results/latest.json (everything measured), the markdown
// table (also written into bench/README.md between the bench markers) and
// bench/results/latest.svg (each figure against its target).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** Does a measured value meet a scenario's target ({op: '>=' | '<=', value})? */
export function meets(value, target) {
  return target.op === '>=' ? value >= target.value : value <= target.value;
}

function fmtTarget(t, unit) {
  const u = unit === 'ratio' ? '' : ` ${unit}`;
  return `${t.op === '>=' ? '≥' : '≤'} ${t.value}${u}${t.formula ? ` (${t.formula})` : ''}`;
}

function mean(values) {
  const v = values.filter((x) => typeof x === 'number');
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

/** CPU other processes used while scenarios measured (noise indicator), from the runs' meters. */
function othersCpu(report) {
  const found = [];
  const walk = (o) => {
    if (o && typeof o === 'object') {
      if (typeof o.others === 'number') found.push(o.others);
      for (const v of Object.values(o)) walk(v);
    }
  };
  walk(report.scenarios);
  const m = mean(found);
  return m === null ? null : Math.round(m * 100) / 100;
}

function markdownTable(report, name = 'latest') {
  const { machine, mode } = report;
  const lines = [];
  lines.push(
    `Measured by \`npm run bench${mode.name === 'quick' ? ' -- --quick' : ''}\` on ${machine.date.slice(0, 10)}: ${machine.cpus} CPU (${machine.cpuModel}), Node ${machine.node}, ` +
      `${machine.pinning ? "proxy, ceilings and nginx pinned to one CPU, load generator, sim and Redis on the other (the sim on the proxy's CPU for the latency scenario; both CPUs for the proxies of scenario 7)" : 'no CPU pinning'}; ` +
      `proxies at their default log level (info), stdout drained through a pipe as by a log collector; hits over ${mode.hitKeys ?? '?'} distinct keys with Zipf popularity, sent by bench/lib/rawload.mjs (autocannon for the other scenarios); ` +
      `everything on 127.0.0.1, ratios measured side by side in the same run, in alternating rounds.` +
      (mode.name === 'quick' ? ' **Quick mode: runs too short to judge speed.**' : ''),
  );
  const others = othersCpu(report);
  const waitedS = Math.round((report.quietWaits ?? []).reduce((a, w) => a + w.waitedMs, 0) / 100) / 10;
  if (others !== null && others >= 0.2) {
    lines.push('');
    lines.push(
      `Other processes on the machine used ${others} CPU on average while this run measured (the bench waited ${waitedS} s in all for quieter moments), so throughput and tail figures are noisier than on an idle machine.`,
    );
  }
  lines.push('');
  lines.push('| scenario | measured | target | result |');
  lines.push('|---|---|---|---|');
  for (const s of report.scenarios) {
    lines.push(
      `| ${s.title} | ${s.display} | ${fmtTarget(s.target, s.unit)} | ${s.skipped ? 'skipped' : s.pass ? 'pass' : '**FAIL**'} |`,
    );
  }
  for (const f of report.failures)
    lines.push(`| ${f.scenario} | did not run: ${f.error.split('\n')[0].replace(/\|/g, '\\|')} | | **ERROR** |`);
  lines.push('');
  lines.push(
    `![each figure against its target](results/${name}.svg) — chart: [results/${name}.svg](results/${name}.svg); raw figures: [results/${name}.json](results/${name}.json); what each scenario measures: [Scenarios](#scenarios-and-how-to-read-them); the hot-path profile: [Hot path](#hot-path-what-a-hit-costs).`,
  );
  return lines.join('\n');
}

const PROFILE_START = '<!-- profile:start -->';
const PROFILE_END = '<!-- profile:end -->';

/** The profiles' top self-time functions, packages and the proxy's own inclusive time, as markdown. */
function profileMarkdown(report) {
  if (!report.profiles?.length) return '_No profile in this run._';
  const lines = [
    `From the run of ${report.machine.date} (${report.mode.name} mode); percentages are of the process's busy (non-idle) CPU time.`,
  ];
  for (const p of report.profiles) {
    lines.push('');
    lines.push(
      `#### ${p.path} path — \`${p.file}\`: ${Math.round(p.rpsUnderProfiler)} req/s under the profiler, ${p.connections} connections, ${p.seconds} s (the measured window only); busy ${p.busyMs} ms, idle ${p.idlePercent}%`,
    );
    lines.push('');
    lines.push('| self % | function | where |');
    lines.push('|---:|---|---|');
    for (const f of p.top.slice(0, 15))
      lines.push(
        `| ${f.selfPercent} | \`${f.function}\` | ${f.location ? `\`${f.location}\`` : ''} ${f.owner && !f.owner.startsWith('(') ? `(${f.owner})` : ''} |`,
      );
    lines.push('');
    lines.push(
      `By package (self %): ${p.owners
        .slice(0, 10)
        .map((o) => `${o.owner} ${o.selfPercent}`)
        .join(' · ')}`,
    );
    lines.push('');
    lines.push(
      `The proxy's own functions, inclusive % (self + callees): ${p.ownInclusive
        .slice(0, 14)
        .map((f) => `\`${f.function.split(' ')[0]}\` (${f.function.split(' ')[1]}) ${f.inclusivePercent}`)
        .join(' · ')}`,
    );
  }
  return lines.join('\n');
}

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * One bar per figure, on a scale where its target sits at the same x for every row:
 * bar length = measured / target (capped at 3). A "≥" target passes when the bar
 * reaches the line; a "≤" target passes when it stays within it.
 */
function svgChart(report) {
  const rows = report.scenarios.filter((s) => !s.skipped);
  const width = 1040;
  const left = 380; // titles end here
  const plot = 380; // bar area width
  const valuesX = left + plot + 16; // value labels column
  const cap = 3;
  const x = (v) => left + (Math.min(v, cap) / cap) * plot;
  const rowH = 30;
  const top = 60;
  const height = top + rows.length * rowH + 54;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="16" y="22" font-size="15" font-weight="bold">ledger-proxy bench: each figure against its target (${esc(report.mode.name)} mode, ${esc(report.machine.date.slice(0, 10))})</text>`,
  );
  out.push(
    `<text x="16" y="40" fill="#555">Bar = measured ÷ target, so every target sits on the dashed line (bars capped at ${cap}×). A ≥ target passes at or right of the line, a ≤ target at or left of it.</text>`,
  );
  const bottom = top + rows.length * rowH;
  for (const t of [0, 0.5, 1, 1.5, 2, 2.5, 3]) {
    out.push(
      `<line x1="${x(t)}" y1="${top - 8}" x2="${x(t)}" y2="${bottom}" stroke="${t === 1 ? '#222' : '#e6e6e6'}" stroke-width="${t === 1 ? 2 : 1}"${t === 1 ? ' stroke-dasharray="5,3"' : ''}/>`,
    );
    out.push(
      `<text x="${x(t)}" y="${bottom + 16}" text-anchor="middle" fill="#555" font-size="11">${t === 1 ? 'target' : `${t}×`}</text>`,
    );
  }
  rows.forEach((s, i) => {
    const y = top + i * rowH;
    const value = typeof s.measured === 'number' ? s.measured : NaN;
    const rel = s.target.value !== 0 && Number.isFinite(value) ? Math.max(0, value / s.target.value) : 0;
    const color = s.pass ? '#2e9d4f' : '#d0453a';
    out.push(
      `<text x="${left - 10}" y="${y + 15}" text-anchor="end">${esc(s.title.length > 60 ? s.title.slice(0, 59) + '…' : s.title)}</text>`,
    );
    out.push(
      `<rect x="${left}" y="${y + 4}" width="${(Math.max(1, x(rel) - left)).toFixed(1)}" height="16" fill="${color}" opacity="0.85"/>`,
    );
    if (rel > cap)
      out.push(`<text x="${x(cap) - 4}" y="${y + 16}" text-anchor="end" fill="#fff" font-size="11">»</text>`);
    const unit = s.unit === 'ratio' ? '' : ` ${s.unit}`;
    const label = `${Number.isFinite(value) ? value : '?'}${unit}  (target ${s.target.op === '>=' ? '≥' : '≤'} ${s.target.value})  ${s.pass ? 'pass' : 'FAIL'}`;
    out.push(
      `<text x="${valuesX}" y="${y + 16}" fill="${s.pass ? '#1d6b35' : '#a32d24'}" font-size="11">${esc(label)}</text>`,
    );
  });
  out.push(
    `<text x="16" y="${height - 12}" fill="#777" font-size="11">${esc(`${report.machine.cpus} CPU ${report.machine.cpuModel}, Node ${report.machine.node}; raw figures in bench/results/${report.mode.name === 'quick' ? 'quick' : 'latest'}.json`)}</text>`,
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/**
 * Writes {name}.json, {name}.svg and (when `readme`) bench/README.md's results and profiles. Returns the
 * table and the paths written.
 */
export function writeReport(report, { root, name, readme }) {
  const written = [];
  const results = join(root, 'bench', 'results');
  const table = markdownTable(report, name);
  const profileTable = profileMarkdown(report);
  writeFileSync(
    join(results, `${name}.json`),
    JSON.stringify({ ...report, table, profileTable }, (_k, v) => (typeof v === 'bigint' ? String(v) : v), 2) + '\n',
  );
  written.push(`bench/results/${name}.json`);
  writeFileSync(join(results, `${name}.svg`), svgChart(report));
  written.push(`bench/results/${name}.svg`);
  if (readme) {
    // The table and the profiles live in bench/README.md, beside what each scenario measures.
    const benchReadme = join(root, 'bench', 'README.md');
    let bench = readFileSync(benchReadme, 'utf8');
    const a = bench.indexOf(START);
    const b = bench.indexOf(END);
    if (a < 0 || b < a) throw new Error(`bench/README.md has no ${START} … ${END} section`);
    bench = `${bench.slice(0, a + START.length)}\n${table}\n${bench.slice(b)}`;
    written.push('bench/README.md (latest results)');
    const pa = bench.indexOf(PROFILE_START);
    const pb = bench.indexOf(PROFILE_END);
    if (pa >= 0 && pb > pa) {
      bench = `${bench.slice(0, pa + PROFILE_START.length)}\n${profileTable}\n${bench.slice(pb)}`;
      written.push('bench/README.md (profile section)');
    }
    writeFileSync(benchReadme, bench);
    // bench/README.md is under the formatter that CI's lint checks: its tables are aligned as it aligns them.
    execFileSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', benchReadme], { stdio: 'ignore' });
  }
  return { table, written };
}
