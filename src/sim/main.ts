// CLI: run the simulated node alone (demo upstream, bench target).
//   node dist/sim/main.js [--port 8081] [--host 127.0.0.1] [--vendor node] [--chain-id 4]
//     [--versions-per-second 2] [--prune-window N] [--start-version N] [--git-hash H] [--no-gzip]
import { pino } from 'pino';
import { parseSimArgs, USAGE } from './cli-args.js';
import { startSim, type SimOptions } from './server.js';

async function main(): Promise<void> {
  const log = pino({ name: 'sim' });
  let options: SimOptions;
  try {
    options = parseSimArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  const sim = await startSim(options);
  const info = sim.ledger.info();
  log.info(
    { url: sim.url, vendor: options.vendor, chainId: info.chainId, ledgerVersion: String(info.ledgerVersion), versionsPerSecond: options.versionsPerSecond ?? 0 },
    `simulated node listening on ${sim.url}`,
  );
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'simulated node closing');
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`sim: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
