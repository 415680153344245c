// X-Request-Id (api.md §10.5): a client's id is kept when it is plain enough to
// log and forward, else the proxy makes one. The id is on the reply, on the
// node calls made for the request, and on every log line of it. A made id is a
// random prefix for this process and a counter: unique across instances and
// workers, and costing a hit no randomness.
import { randomBytes } from 'node:crypto';
import type { PublicRequest } from './message.js';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export class RequestIds {
  private readonly prefix = randomBytes(6).toString('base64url');
  private count = 0;

  constructor(
    /** server.trustRequestId: keep a client's id */
    private readonly trustClient: boolean,
  ) {}

  of(req: PublicRequest): string {
    const sent = req.headers['x-request-id'];
    if (this.trustClient && typeof sent === 'string' && CLIENT_ID.test(sent)) return sent;
    return `${this.prefix}-${(++this.count).toString(36)}`;
  }
}
