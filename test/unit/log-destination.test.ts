// The buffered log destination (src/process/log.ts): lines are written a batch at a time,
// none waits longer than LOG_FLUSH_MS, none is lost at exit, and their order holds. On a
// pipe whose reader stops reading, no write waits for it: batches are kept and written
// in order once it reads again, each whole.
import { execFileSync } from 'node:child_process';
import fs, { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bufferedLogDestination, LOG_EXIT_WAIT_MS, LOG_FLUSH_MS, LOG_RETRY_MS } from '../../src/process/log.js';

/** Linux's pipe capacity, and its atomic write size (PIPE_BUF). */
const PIPE_CAPACITY = 64 * 1024;
const PIPE_BUF = 4096;

describe('bufferedLogDestination', () => {
  let dir: string;
  const opened: number[] = [];
  const open = (path: string, flags: number): number => {
    const fd = openSync(path, flags);
    opened.push(fd);
    return fd;
  };
  const lines = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `{"msg":"line ${from + i}"}\n`);
  /**
   * Lines of many lengths: some two together are more than a pipe writes whole, and
   * one alone is (which a full pipe takes part of).
   */
  const unevenLines = (bytes: number): string[] => {
    const sizes = [30, 400, 1500, 2600, 2000, 20_000];
    const out: string[] = [];
    for (let total = 0, i = 0; total < bytes; i++) {
      const line = `{"msg":"line ${i}","pad":"${'x'.repeat(sizes[i % sizes.length])}"}\n`;
      out.push(line);
      total += line.length;
    }
    return out;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'log-dest-'));
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    for (const fd of opened.splice(0)) closeSync(fd);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  describe('on a file', () => {
    let file: string;
    let fd: number;
    const content = (): string => readFileSync(file, 'utf8');
    beforeEach(() => {
      file = join(dir, `out-${Math.random().toString(36).slice(2)}.log`);
      fd = open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
    });

    it('holds a few short lines until LOG_FLUSH_MS after the first, then writes them in order', () => {
      const dest = bufferedLogDestination(fd);
      const sent = lines(3);
      for (const line of sent) dest.write(line);
      expect(content()).toBe('');
      // One timer for the batch, not one per line.
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(LOG_FLUSH_MS);
      expect(content()).toBe(sent.join(''));
      expect(vi.getTimerCount()).toBe(0);
    });

    it('writes without waiting once a batch is full, every line whole and in order', () => {
      const dest = bufferedLogDestination(fd);
      const sent = lines(500);
      for (const line of sent) dest.write(line);
      // Written by size, before any timer fired.
      expect(content().length).toBeGreaterThan(4096);
      vi.advanceTimersByTime(LOG_FLUSH_MS);
      expect(content()).toBe(sent.join(''));
    });

    it('a batch the size already wrote is not written again when its timer would fire: no empty write', () => {
      const writes = vi.spyOn(fs, 'writeSync');
      const dest = bufferedLogDestination(fd);
      // Exactly one batch: written by size, with nothing left after it.
      const line = `{"msg":"${'x'.repeat(2048 - 11)}"}\n`;
      dest.write(line);
      expect(writes).toHaveBeenCalledTimes(1);
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(LOG_FLUSH_MS);
      expect(writes).toHaveBeenCalledTimes(1);
      expect(content()).toBe(line);
    });

    it('flushSync writes what waits at once (the exit path) and leaves no timer', () => {
      const dest = bufferedLogDestination(fd);
      const sent = lines(2);
      for (const line of sent) dest.write(line);
      dest.flushSync();
      expect(content()).toBe(sent.join(''));
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  describe('on a pipe whose reader stops reading', () => {
    let reader: number;
    let writer: number;
    /** What the reader gets: what the pipe holds now, up to `most` bytes. */
    const readAll = (most = PIPE_CAPACITY): string => {
      const chunk = Buffer.alloc(most);
      let got = '';
      for (;;) {
        try {
          const n = readSync(reader, chunk, 0, most - got.length, null);
          if (n === 0) return got;
          got += chunk.toString('utf8', 0, n);
          if (got.length === most) return got;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return got;
          throw err;
        }
      }
    };
    beforeEach(() => {
      const fifo = join(dir, `pipe-${Math.random().toString(36).slice(2)}`);
      execFileSync('mkfifo', [fifo]);
      // Both ends non-blocking, as Node opens stdout's pipe: the reader first, or opening the writer fails.
      reader = open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      writer = open(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    });

    it('keeps what the full pipe refuses, then writes it in order once read, no write of two lines over PIPE_BUF', () => {
      const writes = vi.spyOn(fs, 'writeSync');
      const dest = bufferedLogDestination(writer);
      // Four times what the pipe holds; none of it read yet.
      const sent = unevenLines(4 * PIPE_CAPACITY);
      for (const line of sent) dest.write(line);
      const all = sent.join('');
      let got = readAll();
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThanOrEqual(PIPE_CAPACITY);
      // The rest is kept, and tried again on a timer.
      expect(vi.getTimerCount()).toBeGreaterThan(0);
      // Read a little at a time, so that a long line finds room for a part of it.
      for (let i = 0; i < 1000 && got.length < all.length; i++) {
        vi.advanceTimersByTime(Math.max(LOG_RETRY_MS, LOG_FLUSH_MS));
        got += readAll(8192);
      }
      expect(got).toBe(all);
      // A write over PIPE_BUF is one line, or what is left of one: another writer's lines may come between.
      const partsOfOneLine = (data: string | Buffer): boolean => !data.toString().slice(0, -1).includes('\n');
      for (const [, data] of writes.mock.calls as Array<[number, string | Buffer]>)
        if (Buffer.byteLength(data) > PIPE_BUF)
          expect(partsOfOneLine(data), `a write of ${data.length} bytes`).toBe(true);
      // The long lines were taken in parts, and the parts joined up.
      expect(writes.mock.calls.some(([, data]) => Buffer.isBuffer(data))).toBe(true);
    });

    it('flushSync waits for the reader at most LOG_EXIT_WAIT_MS, and writes what the pipe takes', () => {
      const dest = bufferedLogDestination(writer);
      const sent = unevenLines(2 * PIPE_CAPACITY);
      for (const line of sent) dest.write(line);
      const started = performance.now();
      dest.flushSync();
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(LOG_EXIT_WAIT_MS - 1);
      expect(waited).toBeLessThan(LOG_EXIT_WAIT_MS * 5);
      expect(vi.getTimerCount()).toBe(0);
      // What the pipe took is the lines from the first on, each whole.
      const got = readAll();
      expect(got.length).toBeGreaterThan(PIPE_CAPACITY / 2);
      expect(sent.join('').startsWith(got)).toBe(true);
      expect(got.endsWith('\n')).toBe(true);
    });

    it('drops the lines once the reader is gone (EPIPE), as pino does, and throws nothing', () => {
      const dest = bufferedLogDestination(writer);
      closeSync(reader);
      opened.splice(opened.indexOf(reader), 1);
      expect(() => {
        for (const line of lines(500)) dest.write(line);
        dest.flushSync();
      }).not.toThrow();
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
