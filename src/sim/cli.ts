// The sim CLI without the process around it (main.ts adds signals and exit), so
// tests run it in-process: --help, bad arguments and --fault all decide here.
import type { SimFaultMode } from './faults.js';
import { parseSimArgs, USAGE, type SimCli } from './cli-args.js';
import { startSim, type SimNode, type SimOptions } from './server.js';

export interface SimCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface SimStarted {
  sim: SimNode;
  options: SimOptions;
  fault?: SimFaultMode;
}

/** The started node, or the exit code when the CLI ends at once (--help: 0, bad arguments: 2). */
export async function runSimCli(argv: string[], io: SimCliIo): Promise<SimStarted | number> {
  let cli: SimCli;
  try {
    cli = parseSimArgs(argv);
  } catch (err) {
    io.stderr(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (cli.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const sim = await startSim(cli.options);
  // Every request, the GET /v1 probes included, until the process is restarted.
  if (cli.fault !== undefined) sim.faults.set({ mode: cli.fault });
  return { sim, options: cli.options, fault: cli.fault };
}
