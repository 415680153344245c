#!/usr/bin/env node
// CLI entry: parse args, load config, start, and shut down gracefully.
import pino from 'pino';
import { buildApp } from './app.js';
import { CliError, ConfigError, loadConfig, parseCli, USAGE } from './config/index.js';

async function main(): Promise<void> {
  let args;
  let config;
  try {
    args = parseCli(process.argv.slice(2));
    if (args.help) {
      process.stdout.write(USAGE);
      return;
    }
    config = loadConfig({ file: args.configFile });
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError) {
      process.stderr.write(`ledger-proxy: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  // Pretty logs for a person at a terminal; JSON lines for everything else.
  const logger = pino({
    level: config.log.level,
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  });
  const app = await buildApp(config, { logger });
  await app.listen();

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: no new connections, draining requests in flight');
    app.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  // SIGHUP: re-read the config file and swap the upstream list, dropping nothing.
  process.on('SIGHUP', () => {
    let next;
    try {
      next = loadConfig({ file: args.configFile });
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'SIGHUP: config not reloaded, it is invalid; the running upstreams stay');
      return;
    }
    app.reloadUpstreams(next.upstreams).catch((err) => logger.error({ err: (err as Error).message }, 'SIGHUP: upstreams not reloaded'));
  });
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`ledger-proxy: failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
