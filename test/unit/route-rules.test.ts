// The read path serves a route by the rules its descriptor carries, and by nothing
// else: a route made up here, unknown to serve/, gets its prune line, its final
// answers and its answers' versions exactly as its descriptor says.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/cache/memory.js';
import { NodeError } from '../../src/errors.js';
import { PruneClock } from '../../src/ledger/prune-clock.js';
import { Watermark } from '../../src/ledger/watermark.js';
import { ReadThrough, type NodeReader } from '../../src/serve/read-through.js';
import type { NodeAnswer } from '../../src/upstream/answer.js';
import type { AnswerFacts, ReadRequest, ReadRoute } from '../../src/wire/read-request.js';

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
  return { route, version: null, format: 'json', identity: String(n), method: 'GET', path: `/v1/made_up/${n}`, accept: 'application/json' };
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

function reads(node: NodeReader): ReadThrough {
  const logger = pino({ level: 'silent' });
  return new ReadThrough({
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
    expect(() => read.read(request(madeUpRoute(), 9))).toThrow(expect.objectContaining({ status: 410, code: 'block_pruned' }));
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

  it('its not-ready refusal comes before anything else', () => {
    const node = { ...nodes(() => '1', { value: 0n }), chainId: () => undefined };
    expect(() => reads(node).read(request(madeUpRoute(), 1))).toThrow(NodeError);
  });
});
