#!/usr/bin/env node
// CLI entry: parse args, load config, start (one process, or a primary and its
// workers with server.workers > 1), and shut down gracefully.
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { buildApp, type App } from './app.js';
import { runPrimary, serveAsWorker, workerCannotListen, workerCount } from './cluster/primary.js';
import { type CliArgs, CliError, type Config, ConfigError, loadConfig, parseCli, USAGE } from './config/index.js';
import { checkReport } from './config/effective.js';
import { boundHeapGrowth } from './process/heap.js';
import { EXIT_CANNOT_LISTEN, ListenError } from './process/listen-error.js';
import { asError } from './process/log-error.js';
import { processLogger } from './process/logger.js';
import { packageVersion } from './process/version.js';

/** After the drain deadline, how long closing the rest (nodes, Redis) may take. */
const SHUTDOWN_GRACE_MS = 2000;
/** The exit status of a usage or config error (as `nginx -t` and most CLIs). */
const EXIT_USAGE = 2;

/** The args and config to run with, or undefined when the CLI has done its job (help, version, check). */
function startup(): { args: CliArgs; config: Config } | undefined {
  try {
    const args = parseCli(process.argv.slice(2));
    if (args.help) {
      process.stdout.write(USAGE);
      return undefined;
    }
    if (args.version) {
      process.stdout.write(`ledger-proxy ${packageVersion()}\n`);
      return undefined;
    }
    const config = loadConfig({ file: args.configFile });
    if (args.check) {
      process.stdout.write(checkReport(config, args.configFile ?? 'the built-in defaults'));
      return undefined;
    }
    return { args, config };
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError) {
      process.stderr.write(`ledger-proxy: ${err.message}\n`);
      process.exit(EXIT_USAGE);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const started = startup();
  if (started === undefined) return;
  const { args, config } = started;

  // JSON lines, or pretty ones for a person at a terminal (log.format), written a
  // few at a time: a request's log line never waits on stdout's reader, nor costs
  // a write of its own.
  const { logger, destination } = processLogger(config.log);
  const exit = (code: number): never => {
    destination.flushSync();
    process.exit(code);
  };
  // An error nobody caught ends the process, as it would without this, but with a last
  // line that says so, and the lines before it flushed rather than lost with the process.
  process.once('uncaughtException', (err, origin) => {
    logger.fatal({ err: asError(err), origin }, 'stopped: an error nobody caught (a bug: report it with err)');
    exit(1);
  });
  // Before anything is cached: the sizing rule holds only with the heap's growth bounded.
  boundHeapGrowth();
  const workers = workerCount(config.server.workers);
  if (workers > 1 && cluster.isPrimary) {
    await runPrimary(config, logger, workers, exit);
    return;
  }
  const app = await buildApp(config, { logger, serveAdmin: !cluster.isWorker });
  if (cluster.isWorker)
    serveAsWorker({
      readiness: () => app.readiness(),
      metrics: () => app.metrics.registry.getMetricsAsJSON(),
      purge: ({ scope, order }) => app.purge(scope, order),
    });
  await app.listen();
  handleSignals(app, config, logger, args, exit);
}

/**
 * SIGTERM/SIGINT: not ready at once, still accepting for drainDelayMs, then the drain; SIGHUP: reload.
 * The last line says why the process stopped (the signal) and how long the drain took; an
 * error nobody caught stops it at once, its last line at fatal with the error.
 */
function handleSignals(app: App, config: Config, logger: Logger, args: CliArgs, exit: (code: number) => never): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    const { drainDelayMs, shutdownTimeoutMs: deadlineMs } = config.server;
    const startedAt = performance.now();
    const msSince = (at: number): number => Math.round(performance.now() - at);
    app.failReadiness();
    logger.info(
      { signal, drainDelayMs, deadlineMs },
      drainDelayMs > 0
        ? 'shutting down: not ready; accepting connections for drainDelayMs, then draining requests in flight'
        : 'shutting down: not ready, no new connections, draining requests in flight',
    );
    // The drain closes every connection at the deadline; this is for anything
    // else that would hold the process (a node or Redis that never answers a close).
    setTimeout(
      () => {
        logger.error({ signal, deadlineMs, ms: msSince(startedAt) }, 'shutdown did not finish in time; exiting');
        exit(1);
      },
      drainDelayMs + deadlineMs + SHUTDOWN_GRACE_MS,
    ).unref();
    setTimeout(() => {
      const drainStartedAt = performance.now();
      app.close().then(
        () => {
          const drainMs = msSince(drainStartedAt);
          logger.info(
            { signal, drainMs, ms: msSince(startedAt) },
            `stopped on ${signal}: requests in flight drained in ${drainMs} ms`,
          );
          exit(0);
        },
        (err) => {
          logger.error(
            { signal, err: asError(err), drainMs: msSince(drainStartedAt) },
            `stopped on ${signal}: error during shutdown`,
          );
          exit(1);
        },
      );
    }, drainDelayMs);
  };
  // SIGHUP: re-read the config file; reloads are queued one behind the other.
  process.on('SIGHUP', () => {
    let next: Config;
    try {
      next = loadConfig({ file: args.configFile });
    } catch (err) {
      const keys = err instanceof ConfigError ? err.issues.map((i) => i.path) : undefined;
      logger.error(
        { keys, err: asError(err) },
        'SIGHUP: config not reloaded, the file is invalid; the running config stays',
      );
      return;
    }
    app.reload(next).catch((err: unknown) => logger.error({ err: asError(err) }, 'SIGHUP: config not reloaded'));
  });
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  // A config problem met while starting is reported as --check reports it: the keys, no stack.
  if (err instanceof ConfigError) {
    process.stderr.write(`ledger-proxy: ${err.message}\n`);
    process.exit(EXIT_USAGE);
  }
  // A port in use: one line naming the key; in a worker, the primary says it once for all.
  if (err instanceof ListenError) {
    if (cluster.isWorker) return workerCannotListen(err);
    process.stderr.write(`ledger-proxy: ${err.message}\n`);
    process.exit(EXIT_CANNOT_LISTEN);
  }
  process.stderr.write(
    `ledger-proxy: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
