// The vendor (api.md §1: the header prefix and the BCS media type) as the nodes
// show it. With `vendor: auto` it is read from the prefix of the ledger headers
// the nodes answer their probes with, once a strict majority of the nodes that
// answered agree; a configured vendor is checked against the same answers. Until
// the nodes bear a vendor out (or while they contradict the configured one) the
// proxy is not ready: every header it would decode or write would be misnamed.
import type { Logger } from 'pino';
import { type LedgerHeaderNames, ledgerHeaderNames } from './headers.js';
import { type VendorNames, vendorNames } from '../wire/vendor.js';

/** The vendor spoken while none is known yet. */
const DEFAULT = vendorNames('node');

/** A node as the vendor's vote counts it: by identity, named in the log and the not-ready message. */
export interface VendorVoter {
  readonly name: string;
}

export class VendorIdentity {
  /** what each node's last probe answered with */
  private readonly seen = new Map<VendorVoter, string | null>();
  private adopted: VendorNames | undefined;
  /** the contradiction last logged, so it is logged once per state */
  private lastProblem = '';

  constructor(
    /** config.vendor: 'auto', or the vendor the nodes must bear out */
    private readonly configured: string,
    private readonly logger: Logger,
  ) {
    if (configured !== 'auto') this.adopted = vendorNames(configured);
  }

  /** The vendor the proxy speaks as: the configured one, or the nodes' once adopted. */
  names(): VendorNames | undefined {
    return this.adopted;
  }

  /** The vendor's names, or the default's while none is adopted (for what is written before a node answered). */
  namesOrDefault(): VendorNames {
    return this.adopted ?? DEFAULT;
  }

  /** A node answered a probe with `vendor`'s headers (null: with none). */
  observe(node: VendorVoter, vendor: string | null): void {
    this.seen.set(node, vendor);
  }

  /** The nodes that answered vendors: adopts one (auto) once a strict majority agree; the problem, if any. */
  decide(nodes: readonly VendorVoter[]): string | null {
    const votes = new Map<string, string[]>();
    for (const node of nodes) {
      const vendor = this.seen.get(node);
      if (vendor === undefined || vendor === null) continue;
      votes.set(vendor, [...(votes.get(vendor) ?? []), node.name]);
    }
    const answered = [...votes.values()].reduce((n, names) => n + names.length, 0);
    const problem = this.problem(votes, answered);
    if (problem !== null && problem !== this.lastProblem)
      this.logger.error({ vendor: this.configured }, `NOT READY: ${problem}`);
    this.lastProblem = problem ?? '';
    return problem;
  }

  private problem(votes: Map<string, string[]>, answered: number): string | null {
    const describe = (): string =>
      [...votes].map(([vendor, names]) => `${names.join(', ')}: X-${vendor.toUpperCase()}-`).join('; ');
    if (this.configured !== 'auto') {
      const others = [...votes.keys()].filter((v) => v !== this.configured);
      return others.length === 0
        ? null
        : `vendor is configured as ${this.configured} (X-${this.configured.toUpperCase()}- headers), but the nodes answer with other headers (${describe()}); set vendor to match the nodes, or auto`;
    }
    if (this.adopted !== undefined) {
      return votes.size > 1
        ? `the nodes answer with the headers of different vendors (${describe()}); the proxy speaks as ${this.adopted.vendor}`
        : null;
    }
    for (const [vendor, names] of votes) {
      if (names.length * 2 > answered) {
        this.adopted = vendorNames(vendor);
        this.logger.info(
          { vendor, nodes: names },
          `vendor adopted from the nodes' ledger headers: X-${vendor.toUpperCase()}-`,
        );
        return votes.size > 1 ? `the nodes answer with the headers of different vendors (${describe()})` : null;
      }
    }
    return answered === 0
      ? 'vendor is auto, and no node has answered with ledger headers yet'
      : `vendor is auto, and the nodes do not agree on one (${describe()}); set vendor`;
  }
}

/**
 * The names of the identity's vendor as they are now (the configured one, the
 * nodes' once adopted, the default until then), for the parts of the proxy built
 * before the nodes answered: each read asks again.
 */
export function liveVendorNames(identity: VendorIdentity): VendorNames {
  return {
    get vendor() {
      return identity.namesOrDefault().vendor;
    },
    get headerPrefix() {
      return identity.namesOrDefault().headerPrefix;
    },
    get viewBcsMediaType() {
      return identity.namesOrDefault().viewBcsMediaType;
    },
  };
}

/** Where a live set of header names keeps the plain set it reads now. */
const NAMES_NOW = Symbol('the header names now');

/** The ledger header names of the identity's vendor as they are now; one set of names per vendor, made once. */
export function liveHeaderNames(identity: VendorIdentity): LedgerHeaderNames {
  let made: { vendor: VendorNames; names: LedgerHeaderNames } | undefined;
  const now = (): LedgerHeaderNames => {
    const vendor = identity.namesOrDefault();
    if (made?.vendor !== vendor) made = { vendor, names: ledgerHeaderNames(vendor.headerPrefix) };
    return made.names;
  };
  const live = {} as LedgerHeaderNames;
  for (const key of Object.keys(ledgerHeaderNames('x-node-')) as Array<keyof LedgerHeaderNames>) {
    Object.defineProperty(live, key, { get: () => now()[key], enumerable: true });
  }
  Object.defineProperty(live, NAMES_NOW, { get: now });
  return live;
}

/**
 * `names` as they are now, as a plain set: a live set's current one (the same
 * object until the vendor changes), or `names` itself. For a reader of several
 * names at once, since each field of a live set is a lookup.
 */
export function headerNamesNow(names: LedgerHeaderNames): LedgerHeaderNames {
  return (names as { [NAMES_NOW]?: LedgerHeaderNames })[NAMES_NOW] ?? names;
}
