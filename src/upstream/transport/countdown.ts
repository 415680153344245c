// A timer that does not run while paused: the time a streamed answer's reader is
// not reading is not the node's, so it does not count against the node's deadline.

export class Countdown {
  private timer: NodeJS.Timeout | undefined;
  /** ms left when the timer last stopped running */
  private left: number;
  /** performance.now() when the timer last started running */
  private since = 0;
  private stopped = false;

  /** Starts running at once: `expired` is called once `ms` of running time have passed. */
  constructor(
    ms: number,
    private readonly expired: () => void,
  ) {
    this.left = ms;
    this.resume();
  }

  pause(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= performance.now() - this.since;
  }

  resume(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.since = performance.now();
    this.timer = setTimeout(
      () => {
        this.stop();
        this.expired();
      },
      Math.max(0, this.left),
    );
  }

  /** For good: it never expires. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
