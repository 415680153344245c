// Fuzzed client input over HTTP: paths under /v1 and not, handles,
// ledger_version strings, Accept and Content-Type headers (unicode as UTF-8 bytes),
// JSON and BCS bodies and their mutations, bodies around the 8 MiB limit.
//
// Properties, for every request:
//   - the reply is 200 or an allowed error status with exactly api.md §5's body;
//   - an input error of the proxy (400 web_framework_error, 403) never reached the
//     node: the sim's raw_item/view counters did not move;
//   - a read of a served endpoint that the proxy answered from a node or its cache
//     equals the sim's own answer to the same request (status, body bytes,
//     content type, gas used): the ledger stands still in this file, so answers
//     are deterministic. A request built only from valid parts gets exactly the
//     sim's answer, whatever it is;
//   - afterwards the proxy still answers a known-good read.
// Replay a failure with FUZZ_SEED=<seed printed below>.
import fc from 'fast-check';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simTableItem } from '../../src/sim/index.js';
import {
  errorCodeOf,
  FailureLog,
  header,
  parseErrorBody,
  sameAnswer,
  shapeProblem,
  type ReplyLike,
} from '../helpers/fuzz-reply.js';
import { LONG, seedFrom, startStack, type Stack } from '../helpers/fuzz-stack.js';
import {
  bodyBytes,
  FUZZ_LATEST,
  FUZZ_OLDEST,
  fuzzRequest,
  HANDLE,
  PRESENT_KEY,
  type FuzzRequest,
} from './arbitraries.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? (LONG ? 9000 : 2000));
const SEED = seedFrom('FUZZ_SEED');

interface Stats {
  cases: number;
  valid: number;
  clientRefused: number;
  /** both answered 400 web_framework_error, each with its own message */
  sameVerdict: number;
  byOutcome: Map<string, number>;
  /** the proxy refused (400 web_framework_error) what the sim answered otherwise: tag → count, example */
  stricter: Map<string, { count: number; example: string }>;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function describeReq(req: FuzzRequest, body: Buffer | undefined): string {
  const shown =
    body === undefined
      ? '(none)'
      : body.length > 300
        ? `${body.length} bytes: ${JSON.stringify(body.subarray(0, 120).toString('latin1'))}…`
        : JSON.stringify(body.toString('latin1'));
  return `${req.method} ${req.path} headers=${JSON.stringify(req.headers)} body=${shown} [${req.tags.join(' ')}]${req.valid ? ' (valid)' : ''}`;
}

function describeReply(r: ReplyLike): string {
  return `${r.status} x-cache=${header(r, 'x-cache')} type=${header(r, 'content-type')} gas=${header(r, 'x-node-gas-used')} body=${JSON.stringify(r.body.subarray(0, 300).toString('latin1'))}`;
}

/** The kind of an error message: quoted parts and numbers left out. */
function reasonOf(reply: ReplyLike): string {
  const body = parseErrorBody(reply);
  const message = typeof body === 'string' ? body : body.message;
  return message
    .replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, '…')
    .replace(/\d+/g, 'N')
    .slice(0, 90);
}

describe('fuzzed client input over HTTP', () => {
  let stack: Stack;
  let toProxy: Pool;
  let toSim: Pool;

  beforeAll(async () => {
    // latest 1000, oldest 400: pinned versions below 400 are pruned, above 1000 not reached.
    stack = await startStack({
      sim: { startVersion: FUZZ_LATEST },
      beforeProxy: (node) => node.ledger.pruneTo(FUZZ_OLDEST),
    });
    // Bounded: a reply that does not come within 15 s is a failure, not a hang.
    toProxy = new Pool(stack.url, { connections: 1, headersTimeout: 15_000, bodyTimeout: 15_000 });
    toSim = new Pool(stack.node.url, { connections: 1, headersTimeout: 15_000, bodyTimeout: 15_000 });
  });

  afterAll(async () => {
    await toProxy?.destroy();
    await toSim?.destroy();
    await stack?.close();
  });

  const servedCalls = (): number => stack.node.counters.byRoute.raw_item + stack.node.counters.byRoute.view;

  /** One request; null when the HTTP client itself refused to send it (not the proxy's doing). */
  async function send(pool: Pool, req: FuzzRequest, body: Buffer | undefined): Promise<ReplyLike | null> {
    try {
      const res = await pool.request({
        method: req.method as 'POST',
        path: req.path,
        // identity: the sim gzips when asked; the proxy never has to.
        headers: { ...req.headers, 'accept-encoding': 'identity' },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
      return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    } catch (err) {
      if ((err as { code?: string }).code === 'UND_ERR_INVALID_ARG') return null;
      throw new Error(`${(err as Error).message} — the connection failed without a reply`);
    }
  }

  async function checkOne(req: FuzzRequest, stats: Stats): Promise<void> {
    const body = bodyBytes(req.body);
    const what = (): string => describeReq(req, body);
    const before = servedCalls();
    const proxied = await send(toProxy, req, body);
    if (proxied === null) {
      stats.clientRefused++;
      return;
    }
    const reachedNode = servedCalls() - before;
    stats.cases++;
    if (req.valid) stats.valid++;
    const code = errorCodeOf(proxied);
    bump(
      stats.byOutcome,
      `${req.endpoint ?? 'other'} ${proxied.status} ${code ?? ''} ${header(proxied, 'x-cache') ?? ''}`.trim(),
    );

    const problem = shapeProblem(proxied, { head: req.method === 'HEAD' });
    if (problem !== null)
      throw new Error(`not node-shaped: ${problem}\n  request: ${what()}\n  reply: ${describeReply(proxied)}`);

    const inputError = (proxied.status === 400 && code === 'web_framework_error') || proxied.status === 403;
    if (inputError && reachedNode !== 0) {
      throw new Error(
        `an input error (${proxied.status} ${code}) reached the node (${reachedNode} raw_item/view calls)\n  request: ${what()}\n  reply: ${describeReply(proxied)}`,
      );
    }
    if (inputError && header(proxied, 'x-node-ledger-version') !== undefined) {
      throw new Error(
        `an input error carries ledger headers\n  request: ${what()}\n  reply: ${describeReply(proxied)}`,
      );
    }
    // Other paths go to the node as they are: their shape is all we check. So for a
    // HEAD, whose reply has no body to compare (nor an error_code to read).
    if (req.endpoint === null || req.method === 'HEAD') return;

    const direct = await send(toSim, req, body);
    if (direct === null) throw new Error(`the client sent it to the proxy but not to the sim: ${what()}`);
    if (sameAnswer(proxied, direct)) return;

    const mismatch = `the proxy's answer differs from the sim's\n  request: ${what()}\n  proxy: ${describeReply(proxied)}\n  sim:   ${describeReply(direct)}`;
    if (req.valid) throw new Error(`valid input: ${mismatch}`);
    // The proxy may refuse more than the sim does (the sim's JSON.parse is laxer
    // than a node's serde_json: duplicate members, lone surrogates, invalid UTF-8,
    // depth): counted, with an example per kind, never an answer from the node.
    // Both refuse it (400, or 404 for a path that is no route), each with its own message.
    if (code === 'web_framework_error' && direct.status === proxied.status && errorCodeOf(direct) === code) {
      stats.sameVerdict++;
      return;
    }
    if (inputError && proxied.status === 400) {
      const directCode = errorCodeOf(direct) ?? '';
      const key = `sim ${direct.status} ${directCode}, proxy: ${reasonOf(proxied)}`;
      const entry = stats.stricter.get(key) ?? {
        count: 0,
        example: `${what().slice(0, 400)}\n        sim: ${describeReply(direct).slice(0, 200)}`,
      };
      entry.count++;
      stats.stricter.set(key, entry);
      return;
    }
    throw new Error(mismatch);
  }

  it(
    `keeps every reply node-shaped, keeps invalid input from the node, and answers valid reads as the node does (${RUNS} cases)`,
    async () => {
      console.log(
        `[fuzz http] FUZZ_SEED=${SEED} runs=${RUNS} (replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz/http-input.test.ts)`,
      );
      const stats: Stats = {
        cases: 0,
        valid: 0,
        clientRefused: 0,
        sameVerdict: 0,
        byOutcome: new Map(),
        stricter: new Map(),
      };
      const started = performance.now();
      // Every case runs; failures are grouped by kind and reported together at the end.
      const failures = new FailureLog();
      await fc.assert(
        fc.asyncProperty(fuzzRequest, async (req) => {
          try {
            await checkOne(req, stats);
          } catch (err) {
            failures.record(err);
          }
        }),
        { seed: SEED, numRuns: RUNS },
      );
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const outcomes = [...stats.byOutcome].sort((a, b) => b[1] - a[1]).map(([k, n]) => `    ${n}\t${k}`);
      const stricter = [...stats.stricter]
        .sort((a, b) => b[1].count - a[1].count)
        .slice(0, 30)
        .map(([k, v]) => `    ${v.count}\t${k}\n      e.g. ${v.example}`);
      console.log(
        `[fuzz http] ${stats.cases} cases in ${seconds} s (${stats.valid} valid, ${stats.clientRefused} the HTTP client would not send, ${stats.sameVerdict} refused by both with their own messages), seed ${SEED}\n` +
          `  outcomes (endpoint status error_code x-cache):\n${outcomes.join('\n')}\n` +
          `  proxy refused input the sim answered otherwise (${[...stats.stricter.values()].reduce((n, v) => n + v.count, 0)}):\n${stricter.join('\n')}`,
      );
      if (failures.total > 0)
        console.log(`[fuzz http] ${failures.total} FAILURES (seed ${SEED}):\n${failures.summary()}`);
      expect(failures.total, `${failures.total} failures, FUZZ_SEED=${SEED}:\n${failures.summary()}`).toBe(0);
      expect(stats.cases).toBeGreaterThan(RUNS * 0.9);
      expect(stats.valid).toBeGreaterThan(RUNS * 0.1);
    },
    LONG ? 900_000 : 120_000,
  );

  it('still answers a known-good read after the run', async () => {
    const res = await toProxy.request({
      method: 'POST',
      path: `/v1/tables/${HANDLE}/raw_item?ledger_version=900`,
      headers: { 'content-type': 'application/json', accept: 'application/x-bcs' },
      body: JSON.stringify({ key: '0x' + PRESENT_KEY.toString('hex') }),
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    expect(body.equals(simTableItem(HANDLE, PRESENT_KEY, 900n)!)).toBe(true);
    const health = await toProxy.request({ method: 'GET', path: '/v1' });
    expect(health.statusCode).toBe(200);
    expect(JSON.parse(await health.body.text()).ledger_version).toBe(String(FUZZ_LATEST));
    // The error body check itself is exercised: a known input error.
    const bad = await toProxy.request({
      method: 'POST',
      path: '/v1/view?ledger_version=abc',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const badReply = { status: bad.statusCode, headers: bad.headers, body: Buffer.from(await bad.body.arrayBuffer()) };
    expect(badReply.status).toBe(400);
    expect(parseErrorBody(badReply)).toMatchObject({ error_code: 'web_framework_error', vm_error_code: null });
  });
});
