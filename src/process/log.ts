// Where the JSON log lines go when stdout is not a terminal: buffered, and
// written asynchronously a few lines at a time.
//
// One asynchronous write per line costs the event loop more than the line: the
// write is handed to a thread-pool thread, which shares the proxy's CPU, and
// comes back as a second wake-up. Lines are gathered until LOG_BATCH_BYTES, and at most
// LOG_FLUSH_MS after the first of them. No timer runs while nothing is waiting.
import pino from 'pino';

/** Lines are written once this many bytes wait. */
const LOG_BATCH_BYTES = 2048;
/**
 * No write exceeds a pipe's atomic size (PIPE_BUF on Linux) unless a single line
 * does: workers share the primary's stdout, and their lines must not interleave.
 */
const LOG_MAX_WRITE_BYTES = 4096;
/** The longest a line waits for others. */
export const LOG_FLUSH_MS = 100;

export interface LogDestination {
  write(line: string): void;
  /** writes what waits, synchronously: before the process exits */
  flushSync(): void;
}

/** A destination on `fd` (stdout by default) for pino(options, destination). */
export function bufferedLogDestination(fd = 1): LogDestination {
  // pino.destination also flushes what waits when the process exits.
  const sonic = pino.destination({ dest: fd, sync: false, minLength: LOG_BATCH_BYTES, maxWrite: LOG_MAX_WRITE_BYTES });
  let timer: NodeJS.Timeout | undefined;
  // Bytes handed over and not written yet: a batch the size already wrote needs no flush (an empty write otherwise).
  let waiting = 0;
  sonic.on('write', (n: number) => {
    waiting = Math.max(0, waiting - n);
  });
  const flush = (): void => {
    timer = undefined;
    if (waiting > 0) sonic.flush();
  };
  return {
    write(line: string): void {
      waiting += Buffer.byteLength(line);
      sonic.write(line);
      timer ??= setTimeout(flush, LOG_FLUSH_MS).unref();
    },
    flushSync(): void {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      sonic.flushSync();
    },
  };
}
