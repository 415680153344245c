// Concurrent identical calls share one promise while it is in flight.

export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  /** Joins the call in flight for `key`, if any; otherwise starts `run`. */
  do(key: string, run: () => Promise<T>): { promise: Promise<T>; shared: boolean } {
    const existing = this.inFlight.get(key);
    if (existing !== undefined) return { promise: existing, shared: true };
    const promise = run().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, promise);
    return { promise, shared: false };
  }
}
