// A node call that fails in a way the node client does not name: the client's
// reply says so in the proxy's own words, and the log line says what happened
// under `err`, pino's serialized error (the library's type, message and code), the
// stack's frames only at debug.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { NodeError } from '../../src/errors.js';
import { ledgerInfoJson } from '../helpers/ledger-info.js';
import { Watermark } from '../../src/ledger/watermark.js';
import { simLedgerInfo } from '../../src/sim/index.js';
import type { NodeCall, NodeClient } from '../../src/upstream/transport/node-client.js';
import { NodeState } from '../../src/upstream/nodes/node-state.js';
import { upstreamPoolOf } from '../../src/wiring/pool.js';
import { VendorIdentity } from '../../src/ledger/vendor.js';
import { ManualProbes } from '../helpers/probes.js';

const ROUTING = {
  attemptTimeoutMs: 1000,
  deadlineMs: 1000,
  maxAttempts: 1,
  probeIntervalMs: 1000,
  maxLagVersions: 100,
  hedgeAfterMs: 0,
  maxAnswerBytesInFlight: 1024 * 1024,
};

/** A node client that answers its probe and fails every other call with `cause`. */
function failingClient(cause: Error): NodeClient {
  const info = simLedgerInfo(4, 1000n, 0n);
  const stub = {
    name: 'n',
    url: 'http://node.invalid',
    headers: {},
    async probe() {
      return {
        status: 200,
        contentType: 'application/json',
        body: Buffer.from(JSON.stringify(ledgerInfoJson(info, 'x'))),
        vendor: null,
      };
    },
    async call(_call: NodeCall) {
      const failure = NodeError.unavailable('upstream n: the call failed', 'node_failed');
      failure.cause = cause;
      throw failure;
    },
    close: async () => undefined,
    destroy: async () => undefined,
  };
  return stub as unknown as NodeClient;
}

describe('a node call failure the client does not name', () => {
  it('is logged at warn under err (type, message, code, stack at debug); the reply keeps the proxy words', async () => {
    const lines: Array<Record<string, any>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const cause = Object.assign(new Error('some library text'), { code: 'UND_ERR_SOMETHING' });
    const node = new NodeState(failingClient(cause), 'normal', 1, { failureThreshold: 5, openMs: 1000 });
    const pool = upstreamPoolOf({
      nodes: [node],
      routing: ROUTING,
      watermark: new Watermark(),
      logger,
      probeSchedule: new ManualProbes(),
      vendor: new VendorIdentity('node', logger),
    });
    await pool.start();

    const err = await pool
      .forward({ method: 'GET', path: '/v1/anything', headers: {} }, { idempotent: true })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeError);
    expect((err as NodeError).message).toBe('no upstream could answer: upstream n: the call failed');

    const warns = lines.filter((l) => l.level === 40 && l.msg === 'node call failed unexpectedly');
    expect(warns).toHaveLength(1);
    expect(warns[0].upstream).toBe('n');
    expect(warns[0].err).toMatchObject({ type: 'Error', message: 'some library text', code: 'UND_ERR_SOMETHING' });
    // At debug the one line carries the stack's frames; above it, only its first line.
    expect(warns[0].err.stack).toMatch(/^Error: some library text\n\s+at /);
    await pool.close();
  });

  it('above debug, carries the stack without its frames', async () => {
    const lines: Array<Record<string, any>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const cause = Object.assign(new Error('some library text'), { code: 'UND_ERR_SOMETHING' });
    const node = new NodeState(failingClient(cause), 'normal', 1, { failureThreshold: 5, openMs: 1000 });
    const pool = upstreamPoolOf({
      nodes: [node],
      routing: ROUTING,
      watermark: new Watermark(),
      logger,
      probeSchedule: new ManualProbes(),
      vendor: new VendorIdentity('node', logger),
    });
    await pool.start();
    await pool
      .forward({ method: 'GET', path: '/v1/anything', headers: {} }, { idempotent: true })
      .catch(() => undefined);
    const warns = lines.filter((l) => l.level === 40 && l.msg === 'node call failed unexpectedly');
    expect(warns).toHaveLength(1);
    expect(warns[0].err).toEqual({
      type: 'Error',
      message: 'some library text',
      code: 'UND_ERR_SOMETHING',
      stack: 'Error: some library text',
    });
    expect(JSON.stringify(lines)).not.toContain('at ');
    await pool.close();
  });
});
