// The bounded wait the health probes, the hedge, the purge subscription and the
// tracing shutdown share: the outcome of what it waits for, or the fallback once
// the time passes first, and no timer left behind either way.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settlesWithin } from '../../src/timing/settles-within.js';

describe('settlesWithin', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('gives what the work settles to in time, and clears its timer', async () => {
    const waited = settlesWithin(Promise.resolve('answer'), 1000, 'late');
    expect(vi.getTimerCount()).toBe(1);
    await expect(waited).resolves.toBe('answer');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('passes on a rejection that comes in time', async () => {
    const waited = settlesWithin(Promise.reject(new Error('refused')), 1000, 'late');
    await expect(waited).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives the fallback once the time passes first, and the work settling later changes nothing', async () => {
    let finish: (value: string) => void = () => {};
    const work = new Promise<string>((resolve) => {
      finish = resolve;
    });
    const outcome = vi.fn();
    const waited = settlesWithin(work, 1000, null).then(outcome);
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await waited;
    expect(outcome).toHaveBeenCalledWith(null);
    finish('too late');
    await work;
    expect(outcome).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('takes a negative time as none', async () => {
    const waited = settlesWithin(new Promise<never>(() => {}), -5, 'late');
    await vi.advanceTimersByTimeAsync(0);
    await expect(waited).resolves.toBe('late');
  });

  it('does not hold the process open by itself', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    void settlesWithin(new Promise<never>(() => {}), 60_000, undefined);
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
  });
});
