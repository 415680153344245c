// Fastify's and Node's errors become the proxy's own input errors: the message is
// chosen by the error's code, and a library's own message text never reaches a client.
import { describe, expect, it } from 'vitest';
import { fromClientError, fromFrameworkError } from '../../src/http/framework-errors.js';

const LIBRARY_TEXT = 'Library text: internal detail 0xdeadbeef';

describe('framework and parser errors', () => {
  it.each([
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400],
    ['FST_ERR_BAD_URL', 400],
    ['FST_ERR_INVALID_URL', 400],
    ['FST_ERR_SOMETHING_NEW', 400],
  ])("%s: a 400 web_framework_error whose message is the proxy's own", (code, statusCode) => {
    const err = fromFrameworkError({ code, statusCode, message: LIBRARY_TEXT }, 1024);
    expect(err.status).toBe(400);
    expect(err.code).toBe('web_framework_error');
    expect(err.message).not.toContain(LIBRARY_TEXT);
    expect(err.message.length).toBeGreaterThan(0);
  });

  it("a body over the limit names the proxy's limit", () => {
    expect(
      fromFrameworkError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413, message: LIBRARY_TEXT }, 4096).message,
    ).toBe('request body is larger than the limit of 4096 bytes');
  });

  it("Node's parser errors name their code, never their message", () => {
    const err = fromClientError({ code: 'HPE_INVALID_METHOD', message: LIBRARY_TEXT });
    expect(err.status).toBe(400);
    expect(err.message).toBe('malformed HTTP request (HPE_INVALID_METHOD)');
    expect(fromClientError({ message: LIBRARY_TEXT }).message).toBe('malformed HTTP request');
  });
});
