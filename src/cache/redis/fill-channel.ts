// How a filler tells the instances waiting for its fill what came of it: published
// on the key's channel, and kept briefly at its outcome key for a waiter that
// subscribes just after. Waiters of one key share one subscription on a single
// connection in subscriber mode; nothing polls.
import type { RedisConnection, ReportingClient } from './client.js';
import type { RedisCommands } from './commands.js';
import { decodeOutcome, encodeOutcome, GAVE_UP_MESSAGE } from './fill-outcome.js';
import type { FillOutcome } from '../store.js';

/**
 * How long a fill's outcome stays readable at `<prefix>fill:<key>`: only for a
 * waiter that subscribes just after the publish, so a few round trips would do;
 * a second leaves room for a loaded Redis without relaying old outcomes for long.
 */
const FILL_OUTCOME_TTL_MS = 1000;

type Waiter = (message: Buffer) => void;

export class FillChannel {
  /** Waiters per fill channel; a channel is subscribed while it has any. */
  readonly #waiters = new Map<string, { subscribed: Promise<unknown>; waiters: Set<Waiter> }>();
  readonly #subscriber: RedisConnection;

  constructor(
    private readonly commands: RedisCommands,
    private readonly subscriber: ReportingClient,
  ) {
    this.#subscriber = subscriber.redis;
    this.#subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      for (const waiter of this.#waiters.get(channel.toString())?.waiters ?? []) waiter(message);
    });
  }

  /** Two commands (SET with a short expiry, PUBLISH), whatever the number of waiters. */
  async publish(key: string, outcome: FillOutcome): Promise<void> {
    const commands = this.commands;
    if (!commands.usable('publish')) return;
    let message: Buffer;
    try {
      message = encodeOutcome(outcome);
    } catch (err) {
      commands.fail('encode', err);
      message = GAVE_UP_MESSAGE;
    }
    const channel = this.#channel(key);
    try {
      await commands.bounded(
        Promise.all([
          commands.redis.set(channel, message, 'PX', FILL_OUTCOME_TTL_MS),
          commands.redis.publish(channel, message),
        ]),
      );
    } catch (err) {
      commands.fail('publish', err, channel);
    }
  }

  /**
   * Waits for the outcome of another holder's fill of key: undefined when none
   * came within timeoutMs or Redis failed (the caller then asks a node). Costs
   * SUBSCRIBE (shared by the waiters of one key), one GET of the outcome key, and
   * UNSUBSCRIBE: a bounded number of commands, and no polling.
   */
  async await(key: string, timeoutMs: number): Promise<FillOutcome | undefined> {
    const commands = this.commands;
    if (!commands.usable('subscribe') || !commands.subscriptionsHealthy() || !(timeoutMs > 0)) return undefined;
    const channel = this.#channel(key);
    let receive!: Waiter;
    const received = new Promise<Buffer>((resolve) => (receive = resolve));
    const entry = this.#join(channel, receive);
    let timer: NodeJS.Timeout | undefined;
    try {
      const expired = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
      try {
        await commands.bounded(entry.subscribed);
      } catch (err) {
        // The cache's failure, like any command's: waits are then left alone a while.
        commands.failSubscriptions(err);
        return undefined;
      }
      // Published before we subscribed: it is still at the outcome key.
      const early = commands.bounded(commands.redis.getBuffer(channel)).then(
        (value) => value ?? received,
        (err: unknown) => {
          commands.fail('get', err, channel);
          return received;
        },
      );
      const message = await Promise.race([early, received, expired]);
      return message === undefined ? undefined : decodeOutcome(message);
    } finally {
      clearTimeout(timer);
      this.#leave(channel, receive);
    }
  }

  close(): void {
    this.subscriber.disconnect();
  }

  #channel(key: string): string {
    return `${this.commands.prefix}fill:${key}`;
  }

  #join(channel: string, waiter: Waiter): { subscribed: Promise<unknown> } {
    let entry = this.#waiters.get(channel);
    if (entry === undefined) {
      const subscribed = this.#subscriber.subscribe(channel);
      subscribed.catch(() => undefined);
      entry = { subscribed, waiters: new Set() };
      this.#waiters.set(channel, entry);
    }
    entry.waiters.add(waiter);
    return entry;
  }

  #leave(channel: string, waiter: Waiter): void {
    const entry = this.#waiters.get(channel);
    if (entry === undefined) return;
    entry.waiters.delete(waiter);
    if (entry.waiters.size > 0) return;
    this.#waiters.delete(channel);
    this.#subscriber.unsubscribe(channel).catch(() => undefined);
  }
}
