// Bytes as a latin1 string (one char per byte), for the hot path's text of a
// request: Buffer's own latin1Slice, without toString's encoding dispatch around it
// (Node has had it on every Buffer from the start; toString('latin1') calls it).
type Latin1Slicing = Buffer & { latin1Slice(start: number, end: number): string };

/** `buf[start..end)` as latin1, as buf.toString('latin1', start, end) makes it (start ≤ end ≤ buf.length). */
export function latin1(buf: Buffer, start = 0, end = buf.length): string {
  return (buf as Latin1Slicing).latin1Slice(start, end);
}
