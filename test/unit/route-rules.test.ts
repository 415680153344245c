// The read path serves a route by the rules its descriptor carries, and by nothing
// else: a route made up here, unknown to serve/, gets its prune line, its final
// answers and its answers' versions exactly as its descriptor says.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/cache/memory.js';
import { NodeError } from '../../src/errors.js';
import { PruneClock } from '../../src/ledger/prune-clock.js';
import { Watermark } from '../../src/ledger/watermark.js';
import type { NodeReader } from '../../src/serve/ports.js';
import type { ReadThrough } from '../../src/serve/read-through.js';
import { readThroughOf } from '../../src/wiring/read-path.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';
import type { AnswerFacts, ReadRequest, ReadRoute } from '../../src/model/read.js';
import { until } from '../helpers/until.js';

/** A route named by a number in its path: a height when `byHeight`, else nothing prunable; its answer's version is in its body. */
function madeUpRoute(rules: Partial<ReadRoute> = {}): ReadRoute {
  return {
    name: 'made_up',
    family: 'made_up',
    pin: 'path',
    deterministic404: [],
    notYet404: [],
    pruneBy: 'height',
    pruneAt: (req) => BigInt(req.identity),
    routingVersion: () => null,
    answerVersion: (_req, answer: AnswerFacts) => BigInt(answer.body.toString()),
    notFinal: (answer) => (answer.body.toString() === '0' ? 'not there yet' : undefined),
    ...rules,
  };
}

function request(route: ReadRoute, n: number): ReadRequest {
  return {
    route,
    version: null,
    format: 'json',
    identity: String(n),
    method: 'GET',
    path: `/v1/made_up/${n}`,
    accept: 'application/json',
  };
}

/** Nodes that answer every read with `body`, have pruned below `oldest` (versions and heights alike), and count their reads. */
function nodes(body: () => string, oldest: { value: bigint }): NodeReader & { reads: number } {
  const reader = {
    reads: 0,
    async read(): Promise<NodeAnswer> {
      reader.reads++;
      return { upstream: 'n', status: 200, contentType: 'application/json', body: Buffer.from(body()), ledger: null };
    },
    readFromAnother: async () => null,
    isPruned: (version: bigint) => version < oldest.value,
    isBlockPruned: (height: bigint) => height < oldest.value,
    chainId: () => 4,
  };
  return reader;
}

/** Nodes whose every read waits for the test to answer it (answers[i] answers the i-th read). */
function answeredByHand(): NodeReader & { answers: Array<(answer: NodeAnswer) => void> } {
  const answers: Array<(answer: NodeAnswer) => void> = [];
  return { ...nodes(() => '1', { value: 0n }), answers, read: () => new Promise((resolve) => answers.push(resolve)) };
}

const notFound = (code: string): NodeAnswer => ({
  upstream: 'n',
  status: 404,
  contentType: 'application/json',
  body: Buffer.from(JSON.stringify({ message: 'not found', error_code: code, vm_error_code: null })),
  ledger: null,
  errorCode: code,
});

function reads(node: NodeReader): ReadThrough {
  const logger = pino({ level: 'silent' });
  return readThroughOf({
    vendor: { vendor: 'node' },
    nodes: node,
    memory: new MemoryStore({ maxBytes: 1_000_000 }),
    deadlineMs: 1000,
    watermark: new Watermark(),
    pruneClock: new PruneClock(),
    logger,
  });
}

describe('a route is served by the rules in its descriptor', () => {
  it('its prune line: a height below the oldest block answers 410 block_pruned before any lookup', async () => {
    const oldest = { value: 10n };
    const node = nodes(() => '50', oldest);
    const read = reads(node);
    expect(() => read.read(request(madeUpRoute(), 9))).toThrow(
      expect.objectContaining({ status: 410, code: 'block_pruned' }),
    );
    expect(node.reads).toBe(0);
    expect((await read.read(request(madeUpRoute(), 10))).cache).toBe('MISS');
  });

  it('its final answers: one that is not final is answered and asked again; a final one is a memory hit', async () => {
    let body = '0';
    const node = nodes(() => body, { value: 0n });
    const read = reads(node);
    const route = madeUpRoute();
    expect((await read.read(request(route, 1))).cache).toBe('MISS');
    expect((await read.read(request(route, 1))).cache).toBe('MISS');
    body = '7';
    await read.read(request(route, 1));
    expect((read.read(request(route, 1)) as { cache: string }).cache).toBe('HIT');
    expect(node.reads).toBe(3);
  });

  it("with no prune line, an entry goes once its answer's version is pruned; an answer without a version is not stored", async () => {
    const oldest = { value: 0n };
    const node = nodes(() => '20', oldest);
    const read = reads(node);
    const route = madeUpRoute({ pruneAt: () => null });
    await read.read(request(route, 1));
    expect((read.read(request(route, 1)) as { cache: string }).cache).toBe('HIT');
    oldest.value = 21n;
    expect((await read.read(request(route, 1))).cache).toBe('MISS');

    oldest.value = 0n;
    const unversioned = madeUpRoute({ answerVersion: () => null });
    await read.read(request(unversioned, 2));
    expect((await read.read(request(unversioned, 2))).cache).toBe('MISS');
    expect(node.reads).toBe(4);
  });

  it('its not-yet 404s: one answers the read whose call got it, never a read that came after the call was sent', async () => {
    const node = answeredByHand();
    const read = reads(node);
    const route = madeUpRoute({ notYet404: ['not_there_yet'] });
    const first = read.read(request(route, 1));
    expect(node.answers, 'the first read has sent its call').toHaveLength(1);
    const later = read.read(request(route, 1));
    node.answers[0](notFound('not_there_yet'));
    expect(await first).toMatchObject({ status: 404, cache: 'MISS' });
    await until(() => node.answers.length === 2, 1000, 'the later read asking a node itself');
    node.answers[1]({
      upstream: 'n',
      status: 200,
      contentType: 'application/json',
      body: Buffer.from('7'),
      ledger: null,
    });
    expect(await later).toMatchObject({ status: 200, cache: 'MISS' });

    // A 404 the descriptor does not call "not yet" is shared with the read that joined, as any one-off.
    const asking = read.read(request(route, 2));
    const joining = read.read(request(route, 2));
    node.answers[2](notFound('gone_elsewhere'));
    expect(await asking).toMatchObject({ status: 404, cache: 'MISS' });
    expect(await joining).toMatchObject({ status: 404, cache: 'COALESCED' });
    expect(node.answers).toHaveLength(3);
  });

  it('its not-ready refusal comes before anything else', () => {
    const node = { ...nodes(() => '1', { value: 0n }), chainId: () => undefined };
    expect(() => reads(node).read(request(madeUpRoute(), 1))).toThrow(NodeError);
  });
});
