// What makes a purge by route family and version range complete: a record of
// it (its number among the purges of that Redis, the family, the versions),
// kept in the purge hash beside the generation (purge-channel.ts) and in every
// process. Each Redis entry carries the number of purges its writer knew of
// (codec.ts, EntryMark); an entry that a range purge made since names is read as
// a miss. So a range purge reaches every entry it names, also those the index
// (purge-index.ts) has lost track of: an index set evicted under maxmemory, or
// an index write that failed. A record matters only while an entry written
// before it can live (cache.redis.maxTtlSeconds), and none outlives a purge of
// everything, which leaves no entry of the old generation to name.

export interface RangeRecord {
  /** the purge's number among the purges of its Redis */
  purge: number;
  family: string;
  from: bigint;
  /** null: no upper bound */
  to: bigint | null;
  /** when it was made (epoch ms), by the clock of the process that made it */
  at: number;
}

/** A family with more records than this has them folded into one, over all their versions, by its next range purge. */
export const MAX_RECORDS_PER_FAMILY = 64;

const FIELD_PREFIX = 'range:';
const DECIMAL = /^\d{1,20}$/;

export class PurgeRecords {
  /** ascending by purge number */
  #records: RangeRecord[] = [];
  #newest = 0;

  /** The newest record's purge number: an entry whose writer knew of that many purges is named by none. */
  get newest(): number {
    return this.#newest;
  }

  /** An entry of `family` at `version`, written knowing `purges` purges, is named by a range purge made after those. */
  names(purges: number, family: string, version: bigint): boolean {
    const records = this.#records;
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i];
      if (r.purge <= purges) return false;
      if (r.family === family && version >= r.from && (r.to === null || version <= r.to)) return true;
    }
    return false;
  }

  list(): readonly RangeRecord[] {
    return this.#records;
  }

  add(record: RangeRecord): void {
    if (this.#records.some((r) => r.purge === record.purge)) return;
    this.replace([...this.#records, record]);
  }

  /** The records are these from now on. */
  replace(records: readonly RangeRecord[]): void {
    this.#records = [...records].sort((a, b) => a.purge - b.purge);
    this.#newest = this.#records.at(-1)?.purge ?? 0;
  }

  /** Records of purges before `purge`, a purge of everything, go: no entry they could name is read again. */
  dropBefore(purge: number): void {
    this.replace(this.#records.filter((r) => r.purge >= purge));
  }

  /** Records made more than `maxAgeMs` before `now` go (0: none does). */
  expire(now: number, maxAgeMs: number): void {
    if (maxAgeMs > 0 && this.#records.some((r) => r.at < now - maxAgeMs))
      this.replace(this.#records.filter((r) => r.at >= now - maxAgeMs));
  }

  /**
   * The versions a new range purge of `family` records: [from, to] itself, or,
   * when the family has MAX_RECORDS_PER_FAMILY records already, one span over
   * theirs and it (`folded`), which replaces them. A wider record only makes more
   * entries read afresh; it never lets one through.
   */
  recorded(family: string, from: bigint, to: bigint | null): { from: bigint; to: bigint | null; folded: boolean } {
    const own = this.#records.filter((r) => r.family === family);
    if (own.length < MAX_RECORDS_PER_FAMILY) return { from, to, folded: false };
    let low = from;
    let high = to;
    for (const r of own) {
      if (r.from < low) low = r.from;
      if (high !== null && (r.to === null || r.to > high)) high = r.to;
    }
    return { from: low, to: high, folded: true };
  }
}

/** A record's hash field and its value without the time: `range:<purge>`, `<family> <from> <to, or - for none>`. */
export function recordValue(family: string, from: bigint, to: bigint | null): string {
  return `${family} ${from} ${to ?? '-'}`;
}

/** The record a hash field holds (`<at> ` before recordValue's text); undefined for anything else. */
export function recordOf(field: string, value: string): RangeRecord | undefined {
  if (!field.startsWith(FIELD_PREFIX)) return undefined;
  const purge = Number(field.slice(FIELD_PREFIX.length));
  const [at, family, from, to, ...rest] = value.split(' ');
  if (!Number.isSafeInteger(purge) || rest.length > 0 || family === undefined || family === '') return undefined;
  if (!DECIMAL.test(at ?? '') || !DECIMAL.test(from ?? '') || (to !== '-' && !DECIMAL.test(to ?? ''))) return undefined;
  return { purge, family, from: BigInt(from!), to: to === '-' ? null : BigInt(to!), at: Number(at) };
}

/** The hash field of a record. */
export function recordField(purge: number): string {
  return `${FIELD_PREFIX}${purge}`;
}
