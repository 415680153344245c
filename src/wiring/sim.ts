// The seam to the simulated node: product code reaches src/sim/ only here. The
// sim is loaded with import() when an upstream is 'sim', as tracing/sdk.ts is when
// tracing is on, so a proxy in front of real nodes never loads its modules.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { SIM_URL } from '../config/index.js';
import { listenAs } from '../process/listen-error.js';
import type { SimNode } from '../sim/index.js';

export type { SimNode };

/** The built-in simulated node, when an upstream is 'sim'. */
export async function startBuiltInSim(config: Config, logger: Logger): Promise<SimNode | undefined> {
  if (!config.upstreams.some((u) => u.url === SIM_URL)) return undefined;
  const { startSim } = await import('../sim/index.js');
  const sim = await listenAs('sim', config.sim.host, config.sim.port, () =>
    startSim({
      // With vendor: auto the built-in node speaks the default vendor, and the proxy reads it from its headers.
      vendor: config.vendor === 'auto' ? 'node' : config.vendor,
      host: config.sim.host,
      port: config.sim.port,
      chainId: config.sim.chainId,
      versionsPerSecond: config.sim.versionsPerSecond,
      pruneWindow: BigInt(config.sim.pruneWindow),
      writes: { ...config.sim.writes },
    }),
  );
  logger.info({ url: sim.url }, 'upstream is the built-in SIMULATED node (url: sim), not a real ledger node');
  return sim;
}
