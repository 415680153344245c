// cache.verify's pure parts: what counts as the same answer, and when the proxy
// warns at start that no answer can be verified.
import { describe, expect, it } from 'vitest';
import { difference, verifyWarning } from '../../src/serve/verify.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';

const answer = (over: Partial<NodeAnswer> = {}): NodeAnswer => ({
  upstream: 'a',
  status: 200,
  contentType: 'application/json',
  body: Buffer.from('{"a":1}'),
  ledger: null,
  ...over,
});

describe('the same answer', () => {
  it('is the same status, content type, cursor, gas used and body bytes, whichever node and snapshot it came from', () => {
    expect(
      difference(answer(), answer({ upstream: 'b', ledger: { ledgerVersion: 9n } as NodeAnswer['ledger'] })),
    ).toBeNull();
    expect(difference(answer(), answer({ status: 404 }))).toBe('status');
    expect(difference(answer(), answer({ contentType: 'application/x-bcs' }))).toBe('content type');
    expect(difference(answer(), answer({ cursor: '0x01' }))).toBe('cursor');
    expect(difference(answer({ gasUsed: '5' }), answer({ gasUsed: '6' }))).toBe('gas used');
    expect(difference(answer(), answer({ body: Buffer.from('{"a":2}') }))).toBe('body');
  });

  it('is compared exactly: JSON spelled differently is a different answer', () => {
    expect(difference(answer(), answer({ body: Buffer.from('{ "a": 1 }') }))).toBe('body');
  });
});

describe('the warning at start', () => {
  it('comes when a mode that stores only verified answers has fewer than two upstreams', () => {
    expect(verifyWarning({ mode: 'always', sampleRatio: 0.1 }, 1)).toMatch(
      /^cache\.verify\.mode is 'always' but only one upstream is configured: .*no pinned answer is stored, and the change feed takes no page$/,
    );
    expect(verifyWarning({ mode: 'sample', sampleRatio: 0.1 }, 1)).toMatch(
      /no sampled answer is stored, nor a sampled page of the change feed taken$/,
    );
    expect(verifyWarning({ mode: 'always', sampleRatio: 0.1 }, 2)).toBeUndefined();
    expect(verifyWarning({ mode: 'off', sampleRatio: 0.1 }, 1)).toBeUndefined();
    expect(verifyWarning({ mode: 'sample', sampleRatio: 0 }, 1)).toBeUndefined();
  });
});
