// The proxy's own 500: the client is told the proxy failed, never the exception's
// text (it can carry hosts, keys or internals); the cause is kept for the log.
import { describe, expect, it } from 'vitest';
import { errorBody, NodeError } from '../../src/errors.js';

describe('NodeError.from', () => {
  it('keeps a NodeError as it is', () => {
    const err = NodeError.badRequest('bad');
    expect(NodeError.from(err)).toBe(err);
  });

  it('hides the text of anything else, and keeps it as the cause', () => {
    const raw = new Error('connect ECONNREFUSED 10.0.0.7:8080 (api key sk-live-123)');
    const err = NodeError.from(raw);
    expect(err.status).toBe(500);
    expect(err.code).toBe('internal_error');
    expect(errorBody(err).toString()).not.toMatch(/10\.0\.0\.7|sk-live|ECONNREFUSED/);
    expect(err.cause).toBe(raw);
    expect(NodeError.from('a string thrown').message).not.toContain('a string thrown');
  });
});
