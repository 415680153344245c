// How a purge reaches every process sharing a Redis. The generation (generation.ts)
// and a count of purges live in one hash, `<prefix>purge`; each purge is
// announced on the channel of that name, heard on the fill channel's subscriber
// connection. A process that missed an announcement (disconnected, or its
// subscription lost) learns of it from the hash: when either connection is ready
// again, and every RESYNC_MS. Until its first read of the hash after a
// (re)connection it leaves Redis alone (`synced`), so it never reads an entry of a
// generation it should have left.
import { randomUUID } from 'node:crypto';
import type { CacheGeneration } from './generation.js';
import type { RedisConnection } from './redis-client.js';
import type { RedisCommands } from './redis-commands.js';

/** The longest a process that missed an announcement keeps serving what it purged, once Redis answers it. */
export const RESYNC_MS = 10_000;
/** A failed read of the hash is tried again after this. */
const RETRY_MS = 1000;

/**
 * Reads the hash, raising its generation to the caller's if that is higher (the
 * hash was lost: FLUSHALL, eviction), and for a purge counts it ('all' also moves
 * the generation on). Returns {generation, purges}. One key, so it runs as is on
 * a Redis Cluster.
 */
const STATE_SCRIPT = `
local stored = tonumber(redis.call('hget', KEYS[1], 'generation') or '0')
local generation = math.max(stored, tonumber(ARGV[1]))
local purges = tonumber(redis.call('hget', KEYS[1], 'purges') or '0')
if ARGV[2] == 'all' then generation = generation + 1 end
if ARGV[2] ~= 'read' then purges = purges + 1 end
if ARGV[2] ~= 'read' or generation ~= stored then redis.call('hset', KEYS[1], 'generation', generation, 'purges', purges) end
return {generation, purges}`;

/** What a purge announces to the other processes, and what a resync tells this one ('missed': clear everything). */
export type PurgeNotice =
  | { scope: 'all'; generation: number }
  | { scope: 'family'; family: string; fromVersion: string; toVersion: string | null }
  | { scope: 'key'; key: string }
  | { scope: 'missed' };

type Announced = Exclude<PurgeNotice, { scope: 'missed' | 'all' }> | { scope: 'all' };

/** Told of a purge: `announced` is its number among the purges of this Redis (none for 'missed'). */
export type PurgeListener = (notice: PurgeNotice, announced?: number) => void;

/** What a purge announced: the generation after it, and its number among the purges of this Redis. */
export interface Announcement {
  generation: number;
  announced: number;
}

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

  constructor(
    private readonly commands: RedisCommands,
    subscriber: RedisConnection,
    private readonly generation: CacheGeneration,
  ) {
    this.#key = `${commands.prefix}purge`;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#key) this.#heard(message);
    });
    // ioredis subscribes again by itself after a reconnection.
    subscriber.subscribe(this.#key).catch(() => undefined);
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

  /** Told of every purge another process announces, and of purges missed ('missed'). */
  onNotice(listener: PurgeListener): void {
    this.#listener = listener;
  }

  /**
   * Counts a purge in the hash (for 'all', moves the generation on and adopts it)
   * and announces it. Rejects when Redis fails.
   */
  async announce(announced: Announced): Promise<Announcement> {
    const { commands } = this;
    if (!commands.usable('purge')) throw new Error('redis is not connected');
    const [generation, purges] = await this.#state(announced.scope === 'all' ? 'all' : 'count');
    this.#saw(purges);
    this.generation.advance(generation);
    const notice: PurgeNotice = announced.scope === 'all' ? { scope: 'all', generation } : announced;
    const message: Message = { origin: this.#origin, purges, notice };
    await commands.bounded(commands.redis.publish(this.#key, JSON.stringify(message)));
    return { generation, announced: purges };
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
    let generation: number;
    let purges: number;
    try {
      [generation, purges] = await this.#state('read');
    } catch (err) {
      this.commands.fail('purge', err, this.#key);
      setTimeout(() => void this.resync(), RETRY_MS).unref();
      return;
    }
    // Before the first read nothing is known of earlier purges: any at all may have been missed.
    const missed = this.#purgesSeen === undefined ? purges > 0 : purges > this.#purgesSeen;
    this.#saw(purges);
    const moved = this.generation.advance(generation);
    this.#synced = true;
    if (missed || moved) this.#tell({ scope: 'missed' });
  }

  async #state(mode: 'read' | 'count' | 'all'): Promise<[number, number]> {
    const { commands } = this;
    const reply = (await commands.bounded(commands.redis.eval(STATE_SCRIPT, 1, this.#key, String(this.generation.current), mode))) as [number, number];
    return [Number(reply[0]), Number(reply[1])];
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
    if (notice.scope === 'all' && typeof notice.generation === 'number') this.generation.advance(notice.generation);
    this.#tell(notice, purges);
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
