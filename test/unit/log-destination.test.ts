// The buffered log destination (src/process/log.ts): lines are written a batch at a time,
// none waits longer than LOG_FLUSH_MS, none is lost at exit, and their order holds.
import fs, { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bufferedLogDestination, LOG_FLUSH_MS } from '../../src/process/log.js';
import { until } from '../helpers/until.js';

/**
 * Gives a write already handed to the thread pool the time to land: for a check
 * that nothing was written (a negative can only be watched for a while; timers are
 * faked, so the while is event-loop turns), and before the files are closed.
 */
async function letPendingWritesLand(): Promise<void> {
  for (let i = 0; i < 2000; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('bufferedLogDestination', () => {
  let dir: string;
  let file: string;
  let fd: number;
  const lines = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `{"msg":"line ${from + i}"}\n`);
  const content = (): string => readFileSync(file, 'utf8');

  // A test's destination may still have a write in flight when the test ends:
  // the files stay open until every test has run.
  const opened: number[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'log-dest-'));
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    file = join(dir, `out-${opened.length}.log`);
    fd = openSync(file, 'w');
    opened.push(fd);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await letPendingWritesLand();
    for (const f of opened) closeSync(f);
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds a few short lines until LOG_FLUSH_MS after the first, then writes them in order', async () => {
    const dest = bufferedLogDestination(fd);
    const sent = lines(3);
    for (const line of sent) dest.write(line);
    await letPendingWritesLand();
    expect(content()).toBe('');
    // One timer for the batch, not one per line.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    await until(() => content().length > 0, 2000, 'the batch written');
    expect(content()).toBe(sent.join(''));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes without waiting once a batch is full, every line whole and in order', async () => {
    const dest = bufferedLogDestination(fd);
    const sent = lines(500);
    for (const line of sent) dest.write(line);
    await until(() => content().length > 4096, 2000, 'a full batch written');
    // Written by size, before any timer fired.
    expect(content().length).toBeGreaterThan(4096);
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    const all = sent.join('');
    await until(() => content().length === all.length, 2000, 'every line written');
    expect(content()).toBe(all);
  });

  it('a batch the size already wrote is not flushed again when its timer fires: no empty write', async () => {
    const writes = vi.spyOn(fs, 'write');
    try {
      const dest = bufferedLogDestination(fd);
      // Exactly one batch: written by size, with nothing left after it.
      const line = `{"msg":"${'x'.repeat(2048 - 11)}"}\n`;
      dest.write(line);
      await until(() => content().length === line.length, 2000, 'the batch written by size');
      // The write's callback too: the destination knows the batch is written.
      await letPendingWritesLand();
      const before = writes.mock.calls.length;
      vi.advanceTimersByTime(LOG_FLUSH_MS);
      await letPendingWritesLand();
      expect(writes.mock.calls.length - before, 'writes after the timer').toBe(0);
      expect(content()).toBe(line);
    } finally {
      writes.mockRestore();
    }
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
