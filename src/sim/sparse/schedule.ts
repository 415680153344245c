// When the sparse model writes each key. User transactions are numbered n = 0, 1, …
// in version order (a block's metadata transaction and its epilogue are not user
// transactions); a key of window `every` is written once in each window
// [w·every, (w+1)·every) of user transactions, at offset simMix(key, w) % every, so
// the last write at or before a version is found in O(1) and the keys a version
// writes by one pass over each window.
import { SIM_VERSIONS_PER_BLOCK } from '../state/ledger.js';
import { simMix, simWords } from './mix.js';
import { SIM_USER_TXNS_PER_BLOCK, type SimUniverse, type SimUniverseKey } from './universe.js';

const B = SIM_VERSIONS_PER_BLOCK;
const K = SIM_USER_TXNS_PER_BLOCK;

/** What the transaction at a version is: its block's metadata, a user transaction (its number), or its epilogue. */
export type SimVersionKind = { kind: 'metadata' } | { kind: 'user'; n: bigint } | { kind: 'epilogue' };

export function simVersionKind(version: bigint): SimVersionKind {
  const r = version % B;
  if (r === 0n) return { kind: 'metadata' };
  if (r === B - 1n) return { kind: 'epilogue' };
  return { kind: 'user', n: (version / B) * K + r - 1n };
}

/** The version of user transaction n. */
export const simUserVersion = (n: bigint): bigint => (n / K) * B + 1n + (n % K);

/** The number of the last user transaction at or before `version` (-1 when none). */
function lastUserAt(version: bigint): bigint {
  const block = version / B;
  const r = version % B;
  if (r === 0n) return block * K - 1n;
  return block * K + (r - 1n < K ? r - 1n : K - 1n);
}

function offset(key: SimUniverseKey, window: bigint, every: bigint): bigint {
  return BigInt(simMix(key.index, ...simWords(window)) % Number(every));
}

/** The window of a key's last write at or before `version`; -1 when it has not been written (its initial state). */
export function simLastWindow(key: SimUniverseKey, version: bigint): bigint {
  const schedule = key.schedule;
  if (schedule.kind === 'never') return -1n;
  if (schedule.kind === 'block') return version / B;
  const n = lastUserAt(version);
  if (n < 0n) return -1n;
  const window = n / schedule.every;
  return window * schedule.every + offset(key, window, schedule.every) <= n ? window : window - 1n;
}

/** The version of a key's write in `window` (≥ 0). */
export function simWriteVersion(key: SimUniverseKey, window: bigint): bigint {
  const schedule = key.schedule;
  if (schedule.kind === 'never') throw new RangeError('a key that is never written has no write version');
  if (schedule.kind === 'block') return window * B;
  return simUserVersion(window * schedule.every + offset(key, window, schedule.every));
}

/** The keys whose window's write falls at a version (the model then drops the ones whose value stays the same). */
export class SimWriteSchedule {
  readonly #byEvery = new Map<bigint, SimUniverseKey[]>();
  readonly #blockKeys: SimUniverseKey[] = [];
  /** per window size: the last window laid out, its keys by offset */
  readonly #laidOut = new Map<bigint, { window: bigint; byOffset: Map<bigint, SimUniverseKey[]> }>();

  constructor(universe: SimUniverse) {
    for (const key of universe.keys) {
      if (key.schedule.kind === 'block') this.#blockKeys.push(key);
      else if (key.schedule.kind === 'user') {
        const list = this.#byEvery.get(key.schedule.every);
        if (list === undefined) this.#byEvery.set(key.schedule.every, [key]);
        else list.push(key);
      }
    }
  }

  writtenAt(version: bigint): SimUniverseKey[] {
    const kind = simVersionKind(version);
    if (kind.kind === 'metadata') return [...this.#blockKeys];
    if (kind.kind === 'epilogue') return [];
    const out: SimUniverseKey[] = [];
    for (const [every, keys] of this.#byEvery) {
      const window = kind.n / every;
      let laid = this.#laidOut.get(every);
      if (laid?.window !== window) {
        const byOffset = new Map<bigint, SimUniverseKey[]>();
        for (const key of keys) {
          const at = offset(key, window, every);
          const list = byOffset.get(at);
          if (list === undefined) byOffset.set(at, [key]);
          else list.push(key);
        }
        laid = { window, byOffset };
        this.#laidOut.set(every, laid);
      }
      out.push(...(laid.byOffset.get(kind.n % every) ?? []));
    }
    return out;
  }
}
