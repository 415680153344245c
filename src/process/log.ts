// Where the JSON log lines go when stdout is not a terminal: gathered into
// batches, each written with one write(2) on the event loop's own thread.
//
// No write waits for a reader. Node opens stdout's pipe or socket non-blocking
// (this module makes sure it is open), so a full pipe refuses a write at once (EAGAIN)
// instead of holding the event loop: the batch is kept, with those after it, and
// tried again every LOG_RETRY_MS. A file takes a write at once.
//
// No thread is woken for a line either. An asynchronous fs.write hands each batch
// to a thread-pool thread, which shares the proxy's CPU and comes back as a
// second wake-up; on a miss that hop cost more than the write itself.
//
// Lines are gathered until LOG_BATCH_BYTES, and at most LOG_FLUSH_MS after the
// first of them. No timer runs while nothing is waiting.
import fs from 'node:fs';

/** Lines are written once this many bytes wait. */
const LOG_BATCH_BYTES = 2048;
/**
 * No write exceeds a pipe's atomic size (PIPE_BUF on Linux) unless a single line
 * does: workers share the primary's stdout, and their lines must not interleave.
 */
const LOG_MAX_WRITE_BYTES = 4096;
/** The longest a line waits for others. */
export const LOG_FLUSH_MS = 100;
/** How often batches a full pipe refused are tried again. */
export const LOG_RETRY_MS = 10;
/** At exit, how long lines a full pipe refused may wait for its reader: a reader that never reads does not hold the exit. */
export const LOG_EXIT_WAIT_MS = 1000;

export interface LogDestination {
  write(line: string): void;
  /** writes what waits, synchronously: before the process exits */
  flushSync(): void;
}

/** A destination on `fd` (stdout by default) for pino(options, destination). */
export function bufferedLogDestination(fd = 1): LogDestination {
  // Opens stdout as Node does, if nothing has yet: Node makes a pipe or a socket
  // non-blocking as it opens it, and the writes here count on that.
  if (fd === 1) void process.stdout;
  // Lines not yet in a batch, and their bytes.
  let gathering = '';
  let gatheredBytes = 0;
  // Batches not yet written, oldest first: more than one only while the pipe is full.
  const batches: Array<{ data: string | Buffer; bytes: number }> = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  // The reader went away (EPIPE): lines are dropped from then on, as pino's own destination does.
  let closed = false;

  const seal = (): void => {
    if (gatheredBytes === 0) return;
    batches.push({ data: gathering, bytes: gatheredBytes });
    gathering = '';
    gatheredBytes = 0;
  };
  /** Writes batches, oldest first, while the descriptor takes them: false when a full pipe refused one. */
  const writeBatches = (): boolean => {
    while (batches.length > 0) {
      const batch = batches[0];
      const data = batch.data;
      let written: number;
      try {
        // One call, two overloads: a batch as gathered, or what a partial write left of one.
        written = typeof data === 'string' ? fs.writeSync(fd, data) : fs.writeSync(fd, data);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') return false;
        if (code !== 'EPIPE') throw err;
        closed = true;
        batches.length = 0;
        return true;
      }
      // Only a batch over the pipe's atomic size, or a socket, takes part of one.
      if (written < batch.bytes) {
        const bytes = typeof data === 'string' ? Buffer.from(data) : data;
        batches[0] = { data: bytes.subarray(written), bytes: batch.bytes - written };
      } else batches.shift();
    }
    return true;
  };
  const send = (): void => {
    // While a full pipe refuses, the retry writes, in order.
    if (retryTimer !== undefined) return;
    if (!writeBatches()) retryTimer = setTimeout(retry, LOG_RETRY_MS).unref();
  };
  const retry = (): void => {
    retryTimer = undefined;
    send();
  };
  const flush = (): void => {
    flushTimer = undefined;
    seal();
    send();
  };
  return {
    write(line: string): void {
      if (closed) return;
      const bytes = Buffer.byteLength(line);
      if (gatheredBytes + bytes > LOG_MAX_WRITE_BYTES) seal();
      gathering += line;
      gatheredBytes += bytes;
      if (gatheredBytes >= LOG_BATCH_BYTES) {
        if (flushTimer !== undefined) clearTimeout(flushTimer);
        flush();
      } else flushTimer ??= setTimeout(flush, LOG_FLUSH_MS).unref();
    },
    flushSync(): void {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      flushTimer = retryTimer = undefined;
      seal();
      const deadline = performance.now() + LOG_EXIT_WAIT_MS;
      while (!writeBatches() && performance.now() < deadline) sleepSync(LOG_RETRY_MS);
    },
  };
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread for `ms`: only at exit, waiting on a full pipe's reader. */
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
