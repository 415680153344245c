// The proxy-wide count of node answer bytes being received and decoded
// (routing.maxAnswerBytesInFlight). Each answer may hold up to the answer cap, so
// without a bound over all of them, enough large answers at once would take the
// process's memory: an answer that does not fit is refused before it is buffered.

export class AnswerBytes {
  private heldBytes = 0;
  private peakBytes = 0;

  constructor(readonly max: number) {}

  /** Takes `n` bytes of the budget; false (nothing taken) when they do not fit. */
  take(n: number): boolean {
    if (this.heldBytes + n > this.max) return false;
    this.heldBytes += n;
    if (this.heldBytes > this.peakBytes) this.peakBytes = this.heldBytes;
    return true;
  }

  /** Gives back bytes taken: the answer was handed over, or abandoned. */
  give(n: number): void {
    this.heldBytes -= n;
  }

  /** Bytes held now. */
  get held(): number {
    return this.heldBytes;
  }

  /** The most bytes held at once since the start (never above max). */
  get peak(): number {
    return this.peakBytes;
  }
}
