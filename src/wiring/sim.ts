// The seam to the simulated node: product code reaches src/sim/ only here. The
// sim is loaded with import() when an upstream is 'sim', as tracing/sdk.ts is when
// tracing is on, so a proxy in front of real nodes never loads its modules.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { SIM_URL } from '../config/index.js';
import { listenAs } from '../process/listen-error.js';
import type { SimNode } from '../sim/index.js';

export type { SimNode };

/**
 * The built-in simulated node: started with the app when an upstream is 'sim', or
 * by the first reload whose upstreams add one. It listens as the `sim` keys of
 * the config the app started with say (they take effect at a restart).
 */
export class BuiltInSim {
  #node: SimNode | undefined;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  /** The running node; undefined until an upstream named it. */
  get node(): SimNode | undefined {
    return this.#node;
  }

  /** Starts the node when `upstreams` name it and it is not running; rejects with a ListenError naming `sim.port`. */
  async startFor(upstreams: Config['upstreams']): Promise<void> {
    if (this.#node !== undefined || !upstreams.some((u) => u.url === SIM_URL)) return;
    const { config } = this;
    const { startSim } = await import('../sim/index.js');
    this.#node = await listenAs('sim', config.sim.host, config.sim.port, () =>
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
    this.logger.info(
      { url: this.#node.url },
      'upstream is the built-in SIMULATED node (url: sim), not a real ledger node',
    );
  }

  async close(): Promise<void> {
    await this.#node?.close();
  }
}
