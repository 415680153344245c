// How a Redis client's failures are reported: every one to onError (metrics), and
// a warn log at most once per interval while they continue, with the count of
// those not logged; and when each node last failed, so the read path leaves a
// failing node alone a while (on a Cluster, only the slots it serves). Redis is a
// cache to the proxy: a failure is a fact to count, never an error to a client.
import type { Logger } from 'pino';
import { loggedError } from '../../process/log-error.js';

/** The proxy's Redis clients, as logs and metrics name them. */
export type RedisClientName = 'cache' | 'fill-channel' | 'limits';

/**
 * op: get | set | delete | lock | unlock | publish | subscribe (the command failed
 * or Redis was not ready), encode (an answer the codec cannot hold) or connection
 * (the client's error event).
 */
export type RedisErrorListener = (op: string, err: Error, client: RedisClientName) => void;

/** At most one warn log per interval while failures continue; the rest are counted. */
const LOG_INTERVAL_MS = 10_000;

/** After a failure, the read path leaves the node that failed alone this long (RedisCommands.isHealthy). */
export const FAILURE_BACKOFF_MS = 1000;

export class RedisFailures {
  #lastWarnAt = -Infinity;
  #lastFailureAt = -Infinity;
  /** failures of the whole client (no node named): they count against every node */
  #clientFailedAt = -Infinity;
  readonly #nodeFailedAt = new Map<string, number>();
  #suppressed = 0;
  #failingSinceReady = false;
  #closed = false;

  constructor(
    readonly client: RedisClientName,
    private readonly logger: Logger | undefined,
    private readonly onError: RedisErrorListener | undefined,
  ) {}

  /** performance.now() of the last failure of any node, -Infinity before any */
  get lastFailureAt(): number {
    return this.#lastFailureAt;
  }

  /** performance.now() of the last failure of `node` or of the whole client, -Infinity before any */
  failedAt(node: string): number {
    return Math.max(this.#clientFailedAt, this.#nodeFailedAt.get(node) ?? -Infinity);
  }

  /** `node`: where it failed (a Cluster node, or a name for the one server); absent: the whole client. */
  fail(op: string, cause: unknown, node?: string): void {
    // A closed client's connection ending is no failure.
    if (this.#closed && op === 'connection') return;
    const err = cause instanceof Error ? cause : new Error(String(cause));
    this.#failingSinceReady = true;
    const now = performance.now();
    this.#lastFailureAt = now;
    if (node === undefined) this.#clientFailedAt = now;
    else this.#nodeFailedAt.set(node, now);
    try {
      this.onError?.(op, err, this.client);
    } catch {
      // A broken callback must not turn a cache failure into a request failure.
    }
    if (now - this.#lastWarnAt < LOG_INTERVAL_MS) {
      this.#suppressed++;
      return;
    }
    this.logger?.warn(
      {
        client: this.client,
        op,
        ...(node === undefined ? {} : { node }),
        err: loggedError(err, this.logger),
        suppressed: this.#suppressed,
      },
      'redis failure; serving without it',
    );
    this.#lastWarnAt = now;
    this.#suppressed = 0;
  }

  /** The client is connected (again): the next failure is logged at once. */
  recovered(): void {
    if (this.#failingSinceReady)
      this.logger?.info({ client: this.client, suppressed: this.#suppressed }, 'redis available again');
    this.#failingSinceReady = false;
    this.#suppressed = 0;
    this.#lastWarnAt = -Infinity;
  }

  close(): void {
    this.#closed = true;
  }
}
