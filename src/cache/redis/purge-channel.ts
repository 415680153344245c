// How a purge reaches every process sharing a Redis. The generation (generation.ts),
// a count of purges and the records of range purges (purge-records.ts) live in
// one hash, `<prefix>purge`; each purge is announced on the channel of that
// name, heard on the fill channel's subscriber connection. A process that missed
// an announcement (disconnected, or its subscription lost) learns of it from the
// hash: when either connection is ready again, and every RESYNC_MS. Until its
// first read of the hash after a (re)connection it leaves Redis alone (`synced`),
// so it never reads an entry of a generation it should have left.
import { randomUUID } from 'node:crypto';
import { settlesWithin } from '../../timing/settles-within.js';
import type { CacheGeneration } from '../generation.js';
import type { Announcement, PurgeListener, PurgeNotice } from '../store.js';
import { type PurgeHash, type PurgeMode, purgeHash } from './purge-hash.js';
import { PurgeRecords, recordField, recordOf, recordValue } from './purge-records.js';
import type { RedisConnection } from './client.js';
import type { RedisCommands } from './commands.js';

/** The longest a process that missed an announcement keeps serving what it purged, once Redis answers it. */
const RESYNC_MS = 10_000;
/** A failed read of the hash is tried again after this. */
const RETRY_MS = 1000;
/** Kept past maxTtlSeconds: the processes' clocks, which date the records, may disagree by this much. */
const RECORD_CLOCK_SLACK_MS = 3_600_000;

type Announced = Exclude<PurgeNotice, { scope: 'missed' | 'all' }> | { scope: 'all' };

interface Message {
  origin: string;
  purges: number;
  notice: PurgeNotice;
}

export class PurgeChannel {
  /** the process's own messages come back to it on the channel: they are known by this */
  readonly #origin = randomUUID();
  readonly #key: string;
  #purgesSeen: number | undefined;
  #synced = false;
  #resyncing: Promise<void> | undefined;
  #listener: PurgeListener = () => undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #recordMaxAgeMs: number;
  /** the range purges an entry read from Redis is checked against */
  readonly records = new PurgeRecords();
  /** true once the channel is subscribed to (purges announced after are heard), false if that failed */
  readonly #subscribed: Promise<boolean>;

  constructor(
    private readonly commands: RedisCommands,
    subscriber: RedisConnection,
    private readonly generation: CacheGeneration,
    /** cache.redis.maxTtlSeconds: the longest an entry a record names can live (undefined: records never expire) */
    maxTtlSeconds?: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#key = `${commands.prefix}purge`;
    this.#recordMaxAgeMs = maxTtlSeconds === undefined ? 0 : maxTtlSeconds * 1000 + RECORD_CLOCK_SLACK_MS;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#key) this.#heard(message);
    });
    // ioredis subscribes again by itself after a reconnection.
    this.#subscribed = subscriber.subscribe(this.#key).then(
      () => true,
      () => false,
    );
    subscriber.on('ready', () => void this.resync());
    commands.redis.on('close', () => {
      this.#synced = false;
    });
    commands.redis.on('ready', () => {
      this.#synced = false;
      void this.resync();
    });
    this.#timer = setInterval(() => void this.resync(), RESYNC_MS);
    this.#timer.unref();
  }

  /** The generation is as Redis has it since the connection was last (re)made. */
  get synced(): boolean {
    return this.#synced;
  }

  /** The purges of this Redis this process knows of: the mark of an entry it stores now. */
  get purges(): number {
    return this.#purgesSeen ?? 0;
  }

  /** Told of every purge another process announces, and of purges missed ('missed'). */
  onNotice(listener: PurgeListener): void {
    this.#listener = listener;
  }

  /**
   * Counts a purge in the hash (for 'all', moves the generation on and adopts it;
   * for 'family', records its range) and announces it. Rejects when Redis fails.
   */
  async announce(announced: Announced): Promise<Announcement> {
    const { commands } = this;
    if (!commands.usable('purge')) throw new Error('redis is not connected');
    const known = this.#purgesSeen;
    let state: PurgeHash;
    let widened: Announcement['widened'];
    if (announced.scope === 'family') {
      const asked = {
        from: BigInt(announced.fromVersion),
        to: announced.toVersion === null ? null : BigInt(announced.toVersion),
      };
      const recorded = this.records.recorded(announced.family, asked.from, asked.to);
      if (recorded.folded)
        widened = { fromVersion: String(recorded.from), toVersion: recorded.to === null ? null : String(recorded.to) };
      state = await this.#state('range', [
        recordValue(announced.family, recorded.from, recorded.to),
        recorded.folded ? '1' : '0',
      ]);
    } else {
      state = await this.#state(announced.scope === 'all' ? 'all' : 'count');
    }
    const { generation, purges } = state;
    this.#saw(purges);
    this.generation.advance(generation);
    if (announced.scope === 'all') this.records.dropBefore(purges);
    await this.#follow(state, known);
    const notice: PurgeNotice = announced.scope === 'all' ? { scope: 'all', generation } : announced;
    const message: Message = { origin: this.#origin, purges, notice };
    await commands.bounded(commands.redis.publish(this.#key, JSON.stringify(message)));
    return widened === undefined ? { generation, announced: purges } : { generation, announced: purges, widened };
  }

  /**
   * Whether the channel is subscribed to within timeoutMs: from then on a purge
   * another process announces is heard as it is made, not learnt at the next
   * resync as 'missed'. Never rejects.
   */
  whenSubscribed(timeoutMs: number): Promise<boolean> {
    return settlesWithin(this.#subscribed, timeoutMs, false);
  }

  /** Reads the hash: a newer generation is adopted, and purges missed are told as 'missed'. Never rejects. */
  resync(): Promise<void> {
    this.#resyncing ??= this.#resync().finally(() => (this.#resyncing = undefined));
    return this.#resyncing;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #resync(): Promise<void> {
    // Quietly: the subscriber may be ready before the command connection is.
    if (!this.commands.isReady()) return;
    const known = this.#purgesSeen;
    let state: PurgeHash;
    try {
      state = await this.#state('read');
    } catch (err) {
      this.commands.fail('purge', err, this.#key);
      setTimeout(() => void this.resync(), RETRY_MS).unref();
      return;
    }
    const { generation, purges } = state;
    // Before the first read nothing is known of earlier purges: any at all may have been missed.
    const missed = known === undefined ? purges > 0 : purges > known;
    this.#saw(purges);
    const moved = this.generation.advance(generation);
    await this.#follow(state, known);
    this.#synced = true;
    if (missed || moved) this.#tell({ scope: 'missed' });
  }

  /**
   * The records are the hash's, and those of purges heard since the script read
   * it; but when the hash was lost (its count fell below what this process
   * knew), this process keeps its own and writes them back.
   */
  async #follow(state: PurgeHash, known: number | undefined): Promise<void> {
    this.records.expire(this.now(), this.#recordMaxAgeMs);
    if (known !== undefined && state.storedPurges < known) return this.#restore();
    this.records.replace([...state.records, ...this.records.list().filter((r) => r.purge > state.purges)]);
  }

  /** Writes this process's records back into a hash that lost them (a record of the same number there is left as it is). */
  async #restore(): Promise<void> {
    const { commands } = this;
    const redis = commands.redis;
    try {
      await commands.bounded(
        Promise.all(
          this.records
            .list()
            .map((r) =>
              redis.hsetnx(this.#key, recordField(r.purge), `${r.at} ${recordValue(r.family, r.from, r.to)}`),
            ),
        ),
      );
    } catch (err) {
      commands.fail('purge', err);
    }
  }

  #state(mode: PurgeMode, range?: [string, string]): Promise<PurgeHash> {
    return purgeHash(
      this.commands,
      this.#key,
      {
        generation: this.generation.current,
        purges: this.#purgesSeen ?? 0,
        now: this.now(),
        recordMaxAgeMs: this.#recordMaxAgeMs,
      },
      mode,
      range,
    );
  }

  #heard(text: string): void {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message?.origin === this.#origin || typeof message.notice !== 'object' || message.notice === null) return;
    const purges = typeof message.purges === 'number' ? message.purges : undefined;
    if (purges !== undefined) this.#saw(purges);
    const notice = message.notice;
    if (notice.scope === 'all' && typeof notice.generation === 'number') {
      this.generation.advance(notice.generation);
      if (purges !== undefined) this.records.dropBefore(purges);
    }
    if (notice.scope === 'family' && purges !== undefined) this.#recordHeard(notice, purges);
    this.#tell(notice, purges);
  }

  /** Another process's range purge, recorded here before any read could meet an entry it names. */
  #recordHeard(notice: Extract<PurgeNotice, { scope: 'family' }>, purges: number): void {
    // Checked as a record read from the hash is: a message is never trusted to be well formed.
    const record = recordOf(
      recordField(purges),
      `${this.now()} ${notice.family} ${notice.fromVersion} ${notice.toVersion ?? '-'}`,
    );
    if (record !== undefined) this.records.add(record);
  }

  #saw(purges: number): void {
    if (this.#purgesSeen === undefined || purges > this.#purgesSeen) this.#purgesSeen = purges;
  }

  #tell(notice: PurgeNotice, announced?: number): void {
    try {
      this.#listener(notice, announced);
    } catch {
      // A broken listener must not stop the channel.
    }
  }
}
