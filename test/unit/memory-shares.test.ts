import { describe, expect, it } from 'vitest';
import {
  keepsLatestAnswers,
  LATEST_ANSWERS_SHARE,
  memoryShares,
  SPELLINGS_SHARE,
} from '../../src/config/memory-shares.js';
import { spellingBytesFor } from '../../src/responder/read-parser.js';

const MiB = 1024 * 1024;

describe('memory shares of cache.memory.maxBytes', () => {
  it('never add up to more than maxBytes, whatever its size, with or without latest answers', () => {
    for (const maxBytes of [1, 7, 1000, 32 * MiB, 32 * MiB + 3, 256 * MiB, 1024 * MiB]) {
      for (const latest of [false, true]) {
        const shares = memoryShares(maxBytes, { keepsLatestAnswers: latest });
        expect(shares.tier + shares.spellings + shares.latestAnswers, `${maxBytes} ${latest}`).toBeLessThanOrEqual(
          maxBytes,
        );
        expect(shares.tier, `${maxBytes} ${latest}`).toBeGreaterThan(0);
      }
    }
  });

  it('gives each part its documented share, and the tier the rest', () => {
    expect(memoryShares(256 * MiB, { keepsLatestAnswers: false })).toEqual({
      tier: 192 * MiB,
      spellings: 64 * MiB,
      latestAnswers: 0,
    });
    expect(memoryShares(256 * MiB, { keepsLatestAnswers: true })).toEqual({
      tier: 160 * MiB,
      spellings: 64 * MiB,
      latestAnswers: 32 * MiB,
    });
    expect(SPELLINGS_SHARE + LATEST_ANSWERS_SHARE).toBeLessThan(1);
  });

  it('has no floor: the spellings of a small bound are a share of it', () => {
    expect(spellingBytesFor(32 * MiB)).toBe(8 * MiB);
    expect(spellingBytesFor(4 * MiB)).toBe(1 * MiB);
  });

  it('keeps latest answers only when some stale serving is configured', () => {
    expect(keepsLatestAnswers({ maxStalenessMs: 0, maxStalenessVersions: 0, staleIfErrorMs: 0 })).toBe(false);
    expect(keepsLatestAnswers({ maxStalenessMs: 0, maxStalenessVersions: 0, staleIfErrorMs: 1 })).toBe(true);
    expect(keepsLatestAnswers({ maxStalenessMs: 0, maxStalenessVersions: 3, staleIfErrorMs: 0 })).toBe(true);
    expect(keepsLatestAnswers({ maxStalenessMs: 500, maxStalenessVersions: 0, staleIfErrorMs: 0 })).toBe(true);
  });
});
