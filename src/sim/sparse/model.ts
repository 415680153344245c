// The sparse write model: its universe, when each key is written, and each key's
// value at any version (a function of the key and its last write at or before it).
// Tests and the bench build one with the node's options to compute what a node
// answers and what each version writes, without HTTP.
import { SIM_GENESIS_TIMESTAMP_USEC, SIM_USEC_PER_VERSION } from '../state/ledger.js';
import { SIM_VERSIONS_PER_BLOCK } from '../state/ledger.js';
import { simLastWindow, SimWriteSchedule, simWriteVersion } from './schedule.js';
import { simSparseUniverse, type SimSparseOptions, type SimUniverse, type SimUniverseKey } from './universe.js';
import { simKeyState, type SimKeyState } from './values.js';

type SimWriteOp = 'creation' | 'modification' | 'deletion';

/** One key a version wrote: how, and the value it wrote (null for a deletion). */
export interface SimWrite {
  key: SimUniverseKey;
  op: SimWriteOp;
  value: Buffer | null;
}

export class SimSparseModel {
  readonly universe: SimUniverse;
  readonly #schedule: SimWriteSchedule;
  readonly #usecPerVersion: bigint;

  /** `usecPerVersion`: the ledger's chain clock (CurrentTimeMicroseconds follows it). */
  constructor(options: SimSparseOptions = {}, usecPerVersion = SIM_USEC_PER_VERSION) {
    this.universe = simSparseUniverse(options);
    this.#schedule = new SimWriteSchedule(this.universe);
    this.#usecPerVersion = usecPerVersion;
  }

  #state(key: SimUniverseKey, window: bigint): SimKeyState | null {
    return simKeyState(
      key,
      window,
      (version) => SIM_GENESIS_TIMESTAMP_USEC + version * this.#usecPerVersion,
      (w) => w * SIM_VERSIONS_PER_BLOCK,
    );
  }

  /** The key's value at a version, or null when it is absent then. */
  stateAt(key: SimUniverseKey, version: bigint): SimKeyState | null {
    return this.#state(key, simLastWindow(key, version));
  }

  /** The last version at or before `version` that wrote the key's window, or null when none has. */
  lastWriteAt(key: SimUniverseKey, version: bigint): bigint | null {
    const window = simLastWindow(key, version);
    return window < 0n ? null : simWriteVersion(key, window);
  }

  /** Exactly the keys whose value differs between version-1 and version, in StateKey order. */
  writesAt(version: bigint): SimWrite[] {
    const out: SimWrite[] = [];
    for (const key of this.#schedule.writtenAt(version)) {
      const window = simLastWindow(key, version);
      const before = this.#state(key, window - 1n);
      const after = this.#state(key, window);
      if (after === null) {
        if (before !== null) out.push({ key, op: 'deletion', value: null });
      } else if (before === null) out.push({ key, op: 'creation', value: after.bytes });
      else if (!before.bytes.equals(after.bytes)) out.push({ key, op: 'modification', value: after.bytes });
    }
    return out.sort((a, b) => Buffer.compare(a.key.stateKey, b.key.stateKey));
  }

  /** The universe key of a StateKey's BCS, if it is one. */
  keyOf(stateKey: Uint8Array): SimUniverseKey | undefined {
    return this.universe.byStateKey.get(Buffer.from(stateKey).toString('hex'));
  }

  /** A table's key `k` (u64 LE bytes, 0 ≤ k < tableKeys) in the universe, if it is one. */
  tableKey(handle: string, key: Buffer): SimUniverseKey | undefined {
    const base = this.universe.tableBase.get(handle);
    if (base === undefined || key.length !== 8) return undefined;
    const k = key.readBigUInt64LE(0);
    return k < BigInt(this.universe.tableKeys) ? this.universe.keys[base + Number(k)] : undefined;
  }

  /** The keys at an address (AccessPath keys), in StateKey order; empty outside the universe. */
  keysAt(address: string): SimUniverseKey[] {
    return this.universe.byAddress.get(address) ?? [];
  }
}
