// The delivery deadline of a streamed answer: it expires after its time of
// running, and the time it is paused (the reader not reading) is not counted.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Countdown } from '../../src/upstream/transport/countdown.js';

describe('Countdown', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  it('expires once, after its time of running', () => {
    const expired = vi.fn();
    new Countdown(100, expired);
    vi.advanceTimersByTime(99);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(1000);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('does not count the time it is paused', () => {
    const expired = vi.fn();
    const countdown = new Countdown(100, expired);
    vi.advanceTimersByTime(60);
    countdown.pause();
    vi.advanceTimersByTime(10_000);
    expect(expired).not.toHaveBeenCalled();
    countdown.resume();
    vi.advanceTimersByTime(39);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('pausing or resuming twice changes nothing; once stopped it never expires', () => {
    const expired = vi.fn();
    const countdown = new Countdown(100, expired);
    vi.advanceTimersByTime(50);
    countdown.pause();
    countdown.pause();
    vi.advanceTimersByTime(500);
    countdown.resume();
    countdown.resume();
    vi.advanceTimersByTime(49);
    expect(expired).not.toHaveBeenCalled();
    countdown.stop();
    countdown.resume();
    vi.advanceTimersByTime(10_000);
    expect(expired).not.toHaveBeenCalled();
  });

  it('a time already used up expires at once', () => {
    const expired = vi.fn();
    new Countdown(-5, expired);
    vi.advanceTimersByTime(0);
    expect(expired).toHaveBeenCalledTimes(1);
  });
});
