// A client that half-closes (sends its FIN) right after its requests: every
// request read before the FIN is answered, in order, and then the proxy closes
// the connection; bytes that are no request, or a request the FIN cuts short,
// get the 400 they get without a FIN, after the replies before them. The same
// with the lane on and off (server.lane), whichever transport reads each request,
// and afterwards the proxy holds no connection, lane connection or node call.
import { describe, expect, it } from 'vitest';
import { heldAnswers } from '../helpers/held-answers.js';
import { untilNothingHeld } from '../helpers/leftovers.js';
import { HANDLE, proxy, QUIET, sim } from '../helpers/proxy.js';
import { chunked, expectNodeErrorBody, httpRequest, openSocket, rawReplies } from '../helpers/raw-socket.js';
import { until, within } from '../helpers/until.js';

const HOST = 'Host: proxy.test';
const BCS = ['content-type: application/json', 'accept: application/x-bcs'];
const KEY = '{"key":"0x0000000000000007"}';
const ITEM = (version: number): string => `/v1/tables/${HANDLE}/raw_item?ledger_version=${version}`;
const VIEW = JSON.stringify({ function: '0x1::sim::add', type_arguments: [], arguments: ['40', '2'] });

/** A raw_item read at `version`: a miss the lane reads (and node:http, with the lane off). */
const miss = (version: number): Buffer => httpRequest(`POST ${ITEM(version)} HTTP/1.1`, [HOST, ...BCS], KEY);
/** The same read, chunked: node:http's to read on either transport. */
const chunkedMiss = (version: number): Buffer =>
  httpRequest(`POST ${ITEM(version)} HTTP/1.1`, [HOST, ...BCS, 'Transfer-Encoding: chunked'], chunked(KEY, 5));

interface Case {
  name: string;
  /** what the client writes before its FIN */
  bytes: Buffer;
  /** the node call whose answer is held until the FIN is in (its path contains this) */
  hold?: string;
  /** the statuses of the replies, in order */
  statuses: number[];
  /** a node call the last request makes (its path contains this), or none when it is cut short */
  reaches?: string;
}

const CASES: Case[] = [
  {
    name: 'a miss, then a chunked POST',
    bytes: Buffer.concat([miss(990), chunkedMiss(991)]),
    hold: 'ledger_version=990',
    statuses: [200, 200],
    reaches: 'ledger_version=991',
  },
  {
    name: 'a view, then a chunked POST',
    bytes: Buffer.concat([
      httpRequest('POST /v1/view?ledger_version=990 HTTP/1.1', [HOST, 'content-type: application/json'], VIEW),
      chunkedMiss(991),
    ]),
    hold: '/v1/view',
    statuses: [200, 200],
    reaches: 'ledger_version=991',
  },
  {
    name: 'a miss, then bytes that are no request',
    bytes: Buffer.concat([miss(990), Buffer.from('NOT HTTP AT ALL\r\n\r\n')]),
    hold: 'ledger_version=990',
    statuses: [200, 400],
  },
  {
    name: 'two misses',
    bytes: Buffer.concat([miss(990), miss(991)]),
    hold: 'ledger_version=990',
    statuses: [200, 200],
    reaches: 'ledger_version=991',
  },
  {
    name: 'a miss, then a passthrough call',
    bytes: Buffer.concat([miss(990), httpRequest('GET /v1/estimate_gas_price HTTP/1.1', [HOST])]),
    hold: 'ledger_version=990',
    statuses: [200, 200],
    reaches: '/v1/estimate_gas_price',
  },
  {
    name: 'a miss, then a request whose body the FIN cuts short',
    bytes: Buffer.concat([
      miss(990),
      httpRequest(`POST ${ITEM(991)} HTTP/1.1`, [HOST, ...BCS, 'Content-Length: 50'], KEY.slice(0, 10)),
    ]),
    hold: 'ledger_version=990',
    statuses: [200, 400],
  },
  {
    name: 'a miss, then a chunked POST the FIN cuts short',
    bytes: Buffer.concat([miss(990), chunkedMiss(991).subarray(0, -12)]),
    hold: 'ledger_version=990',
    statuses: [200, 400],
  },
  {
    name: 'a miss, then half a head',
    bytes: Buffer.concat([miss(990), Buffer.from(`POST ${ITEM(991)} HTTP/1.1\r\nHo`)]),
    hold: 'ledger_version=990',
    statuses: [200, 400],
  },
  { name: 'half a head', bytes: Buffer.from(`POST ${ITEM(991)} HTTP/1.1\r\nHo`), statuses: [400] },
  { name: 'nothing', bytes: Buffer.alloc(0), statuses: [] },
];

describe.each([true, false])('a client half-closes after its requests (server.lane %s)', (lane) => {
  it.each(CASES)(
    '$name: every request read is answered, in order, then the connection closes and nothing is held',
    async ({ bytes, hold, statuses, reaches }) => {
      const node = await sim({ startVersion: 1000n });
      const hop = await heldAnswers(node.url);
      const p = await proxy([{ url: hop.url, name: 'node0' }], {
        ...QUIET,
        server: { host: '127.0.0.1', port: 0, lane },
      });
      const callsBefore = node.counters.requests.length;
      if (hold !== undefined) hop.hold(hold);
      const client = await openSocket(p.url);
      client.socket.end(bytes);
      if (hold !== undefined) {
        // The FIN followed the requests on the wire: by the time the first one's node call is
        // answered, the proxy has read it, and the replies are still due.
        await until(() => hop.held() === 1, 3000, 'the first node call to be answered and held');
        hop.release();
      }
      await within(client.closed, 5000, 'the proxy to close the connection');
      const replies = rawReplies(Buffer.from(client.received(), 'latin1'), true);
      expect(replies.map((r) => r.status)).toEqual(statuses);
      for (const reply of replies.filter((r) => r.status === 400))
        expectNodeErrorBody(reply, 400, 'web_framework_error');
      const calls = node.counters.requests.slice(callsBefore).map((r) => r.url);
      if (reaches !== undefined) expect(calls.filter((url) => url.includes(reaches))).toHaveLength(1);
      else expect(calls.filter((url) => url.includes('ledger_version=991'))).toEqual([]);
      await untilNothingHeld(p.app, 'after the half-close');
    },
  );

  it('answers every request of a pipelined batch of 2000, all due when the FIN is read', async () => {
    const node = await sim({ startVersion: 1000n });
    const hop = await heldAnswers(node.url);
    const p = await proxy([{ url: hop.url, name: 'node0' }], {
      ...QUIET,
      server: { host: '127.0.0.1', port: 0, lane },
    });
    const count = 2000;
    hop.hold('/raw_item', 2);
    const client = await openSocket(p.url);
    // Two node calls, held: the first read's, which every reply but the last waits for, and the last
    // read's, made once the proxy has read the whole batch (and so the FIN after it).
    client.socket.end(Buffer.concat([...Array.from({ length: count - 1 }, () => miss(990)), miss(991)]));
    await until(() => hop.held() === 2, 3000, 'both node calls to be answered and held');
    hop.release();
    await within(client.closed, 10_000, 'the proxy to close the connection');
    const replies = rawReplies(Buffer.from(client.received(), 'latin1'), true);
    expect(replies).toHaveLength(count);
    expect(replies.every((r) => r.status === 200)).toBe(true);
    await untilNothingHeld(p.app, 'after the half-close');
  });
});
