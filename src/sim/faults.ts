// Fault injection: one active fault at a time, limited to some routes and/or to
// the next `count` matching requests. The server decides what each mode does.
import type { SimRoute } from './routes.js';

export type SimFaultMode = 'hang' | 'slow' | 'html' | 'reset' | 'status500' | 'status429' | 'empty';

export interface SimFault {
  mode: SimFaultMode;
  /**
   * 'slow': how long to wait before answering normally (default 1000 ms); any
   * other mode but 'hang': how long to wait before the fault (default 0)
   */
  delayMs?: number;
  /** only these routes are faulted (default: all) */
  routes?: SimRoute[];
  /** only the next N matching requests are faulted (default: all until clear()) */
  count?: number;
}

export interface SimFaults {
  set(fault: SimFault): void;
  clear(): void;
}

/** Every mode, in the order the sim CLI's --help lists them. */
export const SIM_FAULT_MODES: readonly SimFaultMode[] = ['hang', 'slow', 'html', 'reset', 'status500', 'status429', 'empty'];

export const SIM_DEFAULT_SLOW_MS = 1000;

export class SimFaultInjector implements SimFaults {
  #active: (SimFault & { remaining: number }) | null = null;

  set(fault: SimFault): void {
    if (!SIM_FAULT_MODES.includes(fault.mode)) throw new RangeError(`unknown fault mode: ${String(fault.mode)}`);
    if (fault.count !== undefined && !(Number.isInteger(fault.count) && fault.count > 0)) {
      throw new RangeError(`fault count must be a positive integer: ${fault.count}`);
    }
    if (fault.delayMs !== undefined && !(fault.delayMs >= 0)) throw new RangeError(`delayMs must be >= 0: ${fault.delayMs}`);
    this.#active = { ...fault, routes: fault.routes && [...fault.routes], remaining: fault.count ?? Infinity };
  }

  clear(): void {
    this.#active = null;
  }

  /** The fault for this request, if any; consumes one of `count`. */
  take(route: SimRoute): SimFault | null {
    const fault = this.#active;
    if (fault === null || (fault.routes !== undefined && !fault.routes.includes(route))) return null;
    fault.remaining--;
    if (fault.remaining <= 0) this.#active = null;
    return fault;
  }
}
