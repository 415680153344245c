// Bytes an entry keeps must be its own: a Buffer that is a view of a larger
// ArrayBuffer (Node's shared 8 KiB pool, a stream's output chunk, a socket's or a
// Redis reply's read buffer) keeps all of it alive for as long as the entry lives,
// and the tier, which counts the view's length, would bound none of it.

/** Is `buf` the whole of its ArrayBuffer? */
export function ownsItsBytes(buf: Buffer): boolean {
  return buf.byteOffset === 0 && buf.buffer.byteLength === buf.length;
}

/** A copy of `buf` in an ArrayBuffer of exactly its size (never from the shared pool). */
export function ownedCopy(buf: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(copy);
  return copy;
}
