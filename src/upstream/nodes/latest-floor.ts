// Read-your-latest (api.md §8): the highest ledger version a latest reply has
// carried. Latest reads go to nodes at or above it; a reply below it (no node at
// or above it answered: a failover) is counted and logged as a step back.
import type { Logger } from 'pino';
import type { NodeAnswer } from '../../model/node-answer.js';

export class LatestFloor {
  private floor: bigint | null = null;

  constructor(
    private readonly logger: Logger,
    /** told of every latest reply below a version already reported (a failover) */
    private readonly onStepBack?: () => void,
  ) {}

  value(): bigint | null {
    return this.floor;
  }

  /** Everything learned of the old chain goes (a chain change). */
  reset(): void {
    this.floor = null;
  }

  /**
   * Lowers the floor to `top` when it is above it: the floor was raised by an
   * answer its node's own probe did not bear out.
   */
  clamp(top: bigint): void {
    if (this.floor !== null && this.floor > top) this.floor = top;
  }

  /** A latest reply (of chain `chain`) is about to be sent: it raises the floor, or is counted as a step back below it. */
  reported(answer: NodeAnswer, chain: number | undefined): void {
    const version = answer.ledger?.ledgerVersion;
    if (version === undefined || answer.ledger!.chainId !== chain) return;
    if (this.floor !== null && version < this.floor) {
      this.onStepBack?.();
      this.logger.warn(
        { upstream: answer.upstream, version: String(version), floor: String(this.floor) },
        'latest read stepped back: no node at or above the version already reported answered',
      );
      return;
    }
    this.floor = version;
  }
}
