// The deadline of one node call. The node's time starts when the request is
// written (undici calls onRequestStart just before it writes), not when the call
// is made: a process paused between the two (a GC pause, CPU contention) has not
// spent the node's time. The wait for a connection before the write has a bound
// of its own, as long, so a node that accepts no connection still times out.
//
// A process too busy to run its timers on time runs an expired one before it
// does the I/O that came due meanwhile; so an expired deadline waits for that one
// turn, as the Redis commands' does (cache/redis/commands.ts): an answer that
// came during the pause is read, and a request whose connection came free (or
// was made) during it is written, which starts the node's time.

export class CallDeadline {
  private readonly timer: NodeJS.Timeout;
  private written = false;
  private stopped = false;

  constructor(ms: number, expired: () => void) {
    this.timer = setTimeout(() => {
      const written = this.written;
      setImmediate(() => {
        if (!this.stopped && this.written === written) expired();
      });
    }, ms);
  }

  /** The request goes on the wire now: the node's time starts here, for as long again. */
  write(): void {
    if (this.stopped) return;
    this.written = true;
    this.timer.refresh();
  }

  /** For good: it never expires. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
