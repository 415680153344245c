// CPU time from /proc (Linux): per process, to tell whether a server was saturated
// during a run (or the load generator was the limit), and machine-wide, to tell how
// much CPU other processes on the machine took meanwhile. null where /proc is missing.
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The fields of `/proc/<pid>/stat` from field 3 (state) on, as text; null when it cannot be read. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime and stime of `pid` in seconds, or null. */
function cpuTimes(pid) {
  const fields = statFields(pid);
  // fields[0] is field 3 (state); utime is field 14, stime field 15
  return fields === null
    ? null
    : { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
}

/**
 * CPU seconds of this process's children that have exited and been waited for
 * (cutime + cstime, fields 16 and 17), or null: how a child's whole use is read
 * once it is gone, when its own /proc entry is gone with it.
 */
export function exitedChildrenSeconds() {
  const fields = statFields('self');
  return fields === null ? null : (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/** Busy CPU seconds of the whole machine (all CPUs), or null. */
function machineBusySeconds() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * Starts a CPU meter over several pids; stop() returns each one's CPU use in
 * cores, plus `others`: what every other process on the machine used meanwhile
 * (a busy machine makes figures noisy; the report shows it). With `kernel`, also
 * `kernel`: the part of each one's use spent in the kernel (stime), in cores.
 */
export function cpuMeter(pids, { kernel: withKernel = false } = {}) {
  const started = performance.now();
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuTimes(pid)]));
  const machineBefore = machineBusySeconds();
  return () => {
    const wall = (performance.now() - started) / 1000;
    const out = {};
    const kernel = {};
    let ours = 0;
    for (const [name, pid] of Object.entries(pids)) {
      const now = cpuTimes(pid);
      const was = before[name];
      const used = now === null || was === null ? null : (now.user + now.system - was.user - was.system) / wall;
      out[name] = round(used, 3);
      kernel[name] = now === null || was === null ? null : round((now.system - was.system) / wall, 3);
      ours += used ?? 0;
    }
    if (withKernel) out.kernel = kernel;
    const machineNow = machineBusySeconds();
    out.others =
      machineNow === null || machineBefore === null
        ? null
        : round(Math.max(0, (machineNow - machineBefore) / wall - ours), 3);
    return out;
  };
}

export function round(value, digits = 3) {
  if (value === null || value === undefined || !Number.isFinite(value)) return value ?? null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Waits until processes other than `pids` use less than `threshold` CPU over a
 * `windowMs` window, for at most `maxWaitMs`. Returns how long it waited and the
 * last level seen (null when /proc is missing: no wait).
 */
export async function waitQuiet({ pids, maxWaitMs, threshold = 0.25, windowMs = 500 }) {
  const started = performance.now();
  for (;;) {
    const meter = cpuMeter(Object.fromEntries(pids.map((pid, i) => [`p${i}`, pid])));
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const others = meter().others;
    const waited = performance.now() - started;
    if (others === null || others < threshold || waited >= maxWaitMs) return { waitedMs: Math.round(waited), others };
  }
}
