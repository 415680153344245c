// CLI: run the simulated node alone (demo upstream, bench target).
//   node dist/sim/main.js --help
import { pino } from 'pino';
import { runSimCli } from './cli.js';

async function main(): Promise<void> {
  const started = await runSimCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
  if (typeof started === 'number') {
    process.exitCode = started;
    return;
  }
  const { sim, options, fault } = started;
  const log = pino({ name: 'sim' });
  const info = sim.ledger.info();
  log.info(
    {
      url: sim.url,
      vendor: options.vendor,
      chainId: info.chainId,
      ledgerVersion: String(info.ledgerVersion),
      oldestLedgerVersion: String(info.oldestLedgerVersion),
      versionsPerSecond: options.versionsPerSecond ?? 0,
      writes: options.writes?.model ?? 'period',
      fault,
    },
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
