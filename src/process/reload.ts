// SIGHUP reloads: one at a time, each changed key applied live or reported as
// needing a restart, so an operator never wonders whether an edit took effect.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { changedKeys } from '../config/diff.js';
import { asError } from './log-error.js';

/**
 * The keys a reload applies live, each with every key under it; any other changed
 * key takes effect only after a restart. The app gives an applier for each of
 * these and for nothing else (the compiler holds it to that), and the
 * configuration reference says "live" for exactly these.
 */
export const LIVE_KEYS = ['upstreams', 'log.level', 'tenants', 'latest.changeFeed'] as const;
export type LiveKey = (typeof LIVE_KEYS)[number];

/** The key whose applier takes dotted `key`: itself, or the nearest enclosing one among `keys`. */
function applierKeyOf(key: string, keys: readonly string[]): string | undefined {
  for (let at = key; at !== ''; at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '') {
    if (keys.includes(at)) return at;
  }
  return undefined;
}

/** Whether a change of dotted `key` is applied by a reload (`upstreams[].url` counts as `upstreams.url`). */
export function reloadsLive(key: string): boolean {
  return applierKeyOf(key.replaceAll('[]', ''), LIVE_KEYS) !== undefined;
}

/** Applies one key of a new config to the running process. */
export type Applier = (next: Config) => Promise<void> | void;

export interface ReloadOutcome {
  applied: string[];
  /** changed keys that take effect only after a restart */
  needRestart: string[];
  /** keys whose live update failed (the running value stays) */
  failed: string[];
}

export class Reloader {
  /** the config as it runs: keys needing a restart keep their old value here */
  private running: Config;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    initial: Config,
    private readonly logger: Logger,
    /** by key path; a changed key without an applier needs a restart */
    private readonly appliers: Readonly<Record<string, Applier>>,
  ) {
    this.running = initial;
  }

  /** Queues `next` behind any reload in progress: two SIGHUPs never interleave. */
  reload(next: Config): Promise<ReloadOutcome> {
    const done = this.queue.then(() => this.apply(next));
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** The key of the applier that takes `key`: its own, or the nearest enclosing section's. */
  private applierKey(key: string): string | undefined {
    return applierKeyOf(key, Object.keys(this.appliers));
  }

  private async apply(next: Config): Promise<ReloadOutcome> {
    const outcome: ReloadOutcome = { applied: [], needRestart: [], failed: [] };
    let running = this.running;
    // A section applied whole (tenants) takes every changed key under it, once.
    const keys = [...new Set(changedKeys(this.running, next).map((key) => this.applierKey(key) ?? key))];
    for (const key of keys) {
      const applier = this.appliers[key];
      if (applier === undefined) {
        outcome.needRestart.push(key);
        this.logger.warn({ key }, 'config reload: changed, but takes effect only after a restart');
        continue;
      }
      try {
        await applier(next);
        running = withKey(running, key, next);
        outcome.applied.push(key);
        this.logger.info({ key }, 'config reload: applied');
      } catch (err) {
        outcome.failed.push(key);
        this.logger.error({ key, err: asError(err) }, 'config reload: not applied; the running value stays');
      }
    }
    this.running = running;
    if (outcome.applied.length + outcome.needRestart.length + outcome.failed.length === 0)
      this.logger.info('config reload: nothing changed');
    return outcome;
  }
}

/** `config` with the value at dotted `key` taken from `from`. */
function withKey(config: Config, key: string, from: Config): Config {
  const path = key.split('.');
  const set = (target: unknown, source: unknown, depth: number): unknown => {
    if (depth === path.length) return source;
    const t = target as Record<string, unknown>;
    const s = source as Record<string, unknown>;
    return { ...t, [path[depth]]: set(t[path[depth]], s[path[depth]], depth + 1) };
  };
  return set(config, from, 0) as Config;
}
