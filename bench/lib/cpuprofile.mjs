// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time per function and per
// package. Self time of a node = the time deltas of the samples taken in it.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Where a script belongs: a package under node_modules, this project's dist/, or Node itself. */
function owner(url, root) {
  if (!url) return '(native/V8)';
  if (url.startsWith('node:')) return 'node internals';
  let path = url;
  if (url.startsWith('file://')) {
    try {
      path = fileURLToPath(url);
    } catch {
      path = url;
    }
  }
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (root && path.startsWith(root)) return `ledger-proxy ${relative(root, path).split('/').slice(0, 2).join('/')}`;
  return path;
}

/** A .cpuprofile read: its nodes by id, and each node's parent. */
function readProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { profile, byId, parent };
}

export function summarizeProfile(file, { root, top = 20 } = {}) {
  const { profile, byId, parent } = readProfile(file);
  const selfUs = new Map();
  let totalUs = 0;
  // The inspector session's own native dispatch (starting and stopping the profiler
  // from inside the process) is the bench's cost, not the proxy's: left out.
  const profilerOwn = new Set(
    profile.nodes.filter((n) => n.callFrame.functionName === 'dispatch' && n.callFrame.url === '').map((n) => n.id),
  );
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    if (dt <= 0 || profilerOwn.has(profile.samples[i])) continue;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
    totalUs += dt;
  }
  const byFunction = new Map();
  const byOwner = new Map();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id);
    const name = callFrame.functionName || '(anonymous)';
    if (name === '(idle)') idleUs += us;
    const rel = callFrame.url ? callFrame.url.replace(`file://${root}/`, '') : '';
    const where = SPECIAL.has(name) ? '' : `${rel}:${callFrame.lineNumber + 1}`;
    const key = `${name}\u0000${where}`;
    const f = byFunction.get(key) ?? {
      function: name,
      location: where,
      owner: SPECIAL.has(name) ? name : owner(callFrame.url, root),
      selfUs: 0,
    };
    f.selfUs += us;
    byFunction.set(key, f);
    const o = SPECIAL.has(name) ? name : owner(callFrame.url, root);
    byOwner.set(o, (byOwner.get(o) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;

  // Inclusive time of this project's own functions (dist/): self + everything they call.
  const inclusive = new Map();
  for (const [id, us] of selfUs) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const { callFrame } = byId.get(at);
      if (!callFrame.url.startsWith(`file://${root}/dist/`)) continue;
      const rel = callFrame.url.replace(`file://${root}/`, '');
      const key = `${callFrame.functionName || '(anonymous)'} ${rel}:${callFrame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const pct = (us, of) => Math.round((1000 * us) / of) / 10;
  const functions = [...byFunction.values()]
    .filter((f) => f.function !== '(idle)')
    .sort((a, b) => b.selfUs - a.selfUs)
    .slice(0, top)
    .map((f) => ({ ...f, selfMs: Math.round(f.selfUs / 100) / 10, selfPercent: pct(f.selfUs, busyUs) }));
  const owners = [...byOwner.entries()]
    .filter(([o]) => o !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .map(([o, us]) => ({ owner: o, selfMs: Math.round(us / 100) / 10, selfPercent: pct(us, busyUs) }));
  const ownInclusive = [...inclusive.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, us]) => ({ function: fn, inclusiveMs: Math.round(us / 100) / 10, inclusivePercent: pct(us, busyUs) }));
  return {
    file,
    totalMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    idlePercent: pct(idleUs, totalUs),
    top: functions,
    owners,
    ownInclusive,
  };
}

/**
 * The share of a profile's busy time spent in samples whose stack holds a frame of a
 * script whose path (relative to `root`) `isPart` accepts: a part's inclusive cost.
 */
export function busyShareUnder(file, { root, isPart }) {
  const { profile, byId, parent } = readProfile(file);
  const under = new Map();
  const isUnder = (id) => {
    if (!under.has(id)) {
      const { callFrame } = byId.get(id);
      const own = callFrame.url.startsWith(`file://${root}/`) && isPart(callFrame.url.slice(`file://${root}/`.length));
      const up = parent.get(id);
      under.set(id, own || (up !== undefined && isUnder(up)));
    }
    return under.get(id);
  };
  let busyUs = 0;
  let partUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i];
    if (dt <= 0 || byId.get(id).callFrame.functionName === '(idle)') continue;
    busyUs += dt;
    if (isUnder(id)) partUs += dt;
  }
  return busyUs === 0 ? 0 : partUs / busyUs;
}
