// The follower pages the feed from the newest version known, in order, into the
// index; anything that breaks the chain of verified versions stops the index and
// the feed starts afresh from the newest version. The nodes here are a scripted
// source: the codec and the pool are tested on their own, and together with the
// sim in test/integration/change-feed.test.ts.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerInfo } from '../../src/ledger/info.js';
import { Watermark } from '../../src/ledger/watermark.js';
import type { NodeAnswer } from '../../src/model/node-answer.js';
import { FeedFollower, type FeedSink } from '../../src/upstream/feed-follower.js';
import { until, within } from '../helpers/until.js';

const CHAIN = 4;
const info = (version: number, chainId = CHAIN): LedgerInfo => ({
  chainId,
  epoch: 1n,
  ledgerVersion: BigInt(version),
  oldestLedgerVersion: 0n,
  ledgerTimestampUsec: 0n,
  blockHeight: 0n,
  oldestBlockHeight: 0n,
});

interface Version {
  version: bigint;
  delimited?: boolean;
}

/** A node whose ledger is at `tip`: a page is a JSON list of versions, or whatever `answer` says for a start. */
class ScriptedNodes {
  tip = 100;
  chain = CHAIN;
  asked: Array<{ start: bigint; limit: number }> = [];
  answer: (start: bigint, limit: number) => Partial<NodeAnswer> | 'throw' | undefined = () => undefined;

  async feedPage(start: bigint, limit: number): Promise<NodeAnswer> {
    this.asked.push({ start, limit });
    const scripted = this.answer(start, limit);
    if (scripted === 'throw') throw new Error('no node answered');
    const versions: number[] = [];
    for (let v = Number(start); v <= this.tip && versions.length < limit; v++) versions.push(v);
    return {
      upstream: 'node1',
      status: 200,
      contentType: 'application/x-bcs',
      body: Buffer.from(JSON.stringify(versions)),
      ledger: info(this.tip, this.chain),
      ...scripted,
    };
  }

  chainId(): number {
    return CHAIN;
  }
}

/** The index as the follower sees it: what it was told, in order. */
class RecordingSink implements FeedSink<Version> {
  events: string[] = [];
  applied: bigint[] = [];
  restart(start: bigint): void {
    this.events.push(`restart ${start}`);
  }
  stop(): void {
    this.events.push('stop');
  }
  apply(versions: readonly Version[]): void {
    for (const { version } of versions) {
      const last = this.applied.at(-1);
      if (last !== undefined && version !== last + 1n && !this.events.at(-1)?.startsWith('restart')) {
        throw new Error(`not contiguous: ${version} after ${last}`);
      }
      this.applied.push(version);
    }
  }
}

/**
 * The fake codec: versions from the JSON list, or delimited by hash from `delimited`; a
 * body that says so fails with that reason, after the versions it verified.
 */
function decode(body: Buffer, start: bigint): Version[] {
  const parsed = JSON.parse(body.toString()) as
    | number[]
    | { fault: string; verified?: number[] }
    | { delimited: number[] };
  const versions = (list: number[]) => list.map((v) => ({ version: BigInt(v) }));
  if ('delimited' in parsed) return parsed.delimited.map((v) => ({ version: BigInt(v), delimited: true }));
  if (!Array.isArray(parsed)) {
    const verifiedPrefix = versions(parsed.verified ?? []);
    throw { reason: parsed.fault, version: start + BigInt(verifiedPrefix.length), verifiedPrefix };
  }
  return versions(parsed);
}

const settings = { pageSize: 10, intervalMs: 0, maxLagVersions: 1000, retryMs: 20 };
let running: FeedFollower<Version> | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

function follow(nodes: ScriptedNodes, overrides: Partial<typeof settings> = {}) {
  const watermark = new Watermark();
  const sink = new RecordingSink();
  const stops: string[] = [];
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const follower = new FeedFollower<Version>({
    source: nodes,
    decode,
    sink,
    watermark,
    logger,
    settings: { ...settings, ...overrides },
    onStop: (reason) => stops.push(reason),
  });
  running = follower;
  return { follower, watermark, sink, stops, lines };
}

/** A follower started once the newest version known is 100: it covers from 101. */
async function followingFrom101(nodes: ScriptedNodes, overrides: Partial<typeof settings> = {}) {
  const followed = follow(nodes, overrides);
  followed.follower.start();
  followed.watermark.observe(info(100));
  await until(() => followed.sink.events[0] === 'restart 101', 2000, 'the start');
  return followed;
}

/** The nodes' ledger moves to `tip`; resolves once the follower covers every version up to it. */
async function ledgerAt(
  nodes: ScriptedNodes,
  { follower, watermark }: { follower: FeedFollower<Version>; watermark: Watermark },
  tip: number,
  timeoutMs = 2000,
): Promise<void> {
  nodes.tip = tip;
  watermark.observe(info(tip));
  await until(
    () => follower.next === BigInt(tip + 1),
    timeoutMs,
    () => `the feed at ${tip}: ${follower.next}`,
  );
}

/** The versions `first` to `last`, in order. */
const versionsFrom = (first: number, last: number): bigint[] =>
  Array.from({ length: last - first + 1 }, (_, i) => BigInt(first + i));

describe('the change feed follower', () => {
  it('starts after the newest version known and follows it page by page', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink } = follow(nodes);
    follower.start();
    // Nothing is asked before a version is known (a negative: given a moment to go wrong).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(nodes.asked).toEqual([]);
    expect(sink.events).toEqual([]);
    watermark.observe(info(100));
    await until(() => sink.events[0] === 'restart 101', 2000, 'a start after 100');
    expect(nodes.asked).toEqual([]);
    await ledgerAt(nodes, { follower, watermark }, 125);
    expect(sink.applied).toEqual(versionsFrom(101, 125));
    expect(nodes.asked.map((a) => a.start)).toEqual([101n, 111n, 121n]);
    expect(nodes.asked.every((a) => a.limit === 10)).toBe(true);
  });

  for (const [name, answer, reason] of [
    ['a page that does not verify', { body: Buffer.from('{"fault":"transaction_hash"}') }, 'transaction_hash'],
    ['410 for the start', { status: 410, errorCode: 'version_pruned' }, 'pruned'],
    ["an older node's 500 for the start", { status: 500, errorCode: 'internal_error' }, 'pruned'],
    ['a page from another chain', { ledger: info(130, 5) }, 'chain'],
  ] as const) {
    it(`stops the index on ${name}, then starts afresh from the newest version`, async () => {
      const nodes = new ScriptedNodes();
      const { follower, watermark, sink, stops } = await followingFrom101(nodes);
      nodes.answer = (start) => (start === 101n ? answer : undefined);
      nodes.tip = 130;
      watermark.observe(info(130));
      await until(() => stops.length === 1, 2000, 'a stop');
      expect(stops).toEqual([reason]);
      expect(sink.events[1]).toBe('stop');
      expect(sink.applied).toEqual([]);
      // A page the codec refused at its first version is asked again, smaller, down to that version alone.
      const limits = nodes.asked.filter((a) => a.start === 101n).map((a) => a.limit);
      expect(limits).toEqual(reason === 'transaction_hash' ? [10, 5, 3, 2, 1] : [10]);
      await until(
        () => sink.events[2] === 'restart 131',
        2000,
        () => `a restart after 130: ${sink.events}`,
      );
      await ledgerAt(nodes, { follower, watermark }, 135);
      expect(sink.applied).toEqual([131n, 132n, 133n, 134n, 135n]);
    });
  }

  it('takes the versions a refused page verified before its fault, and asks again from the fault', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink, stops } = await followingFrom101(nodes);
    nodes.answer = (start) =>
      start === 101n ? { body: Buffer.from('{"fault":"unknown_variant","verified":[101,102,103]}') } : undefined;
    await ledgerAt(nodes, { follower, watermark }, 115);
    expect(stops).toEqual([]);
    expect(sink.applied).toEqual(versionsFrom(101, 115));
    expect(nodes.asked.map((a) => a.start)).toEqual([101n, 104n, 114n]);
  });

  it('asks a page refused at its first version again at half the size, and grows it back once pages are taken', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink, stops } = await followingFrom101(nodes);
    // Too many versions the reader cannot walk for one page's search budget; two fit.
    nodes.answer = (start, limit) =>
      start === 101n && limit > 2 ? { body: Buffer.from('{"fault":"unknown_variant"}') } : undefined;
    await ledgerAt(nodes, { follower, watermark }, 130);
    expect(stops).toEqual([]);
    expect(sink.applied).toEqual(versionsFrom(101, 130));
    expect(nodes.asked.map((a) => `${a.start}/${a.limit}`)).toEqual([
      '101/10',
      '101/5',
      '101/3',
      '101/2',
      '103/4',
      '107/8',
      '115/10',
      '125/10',
    ]);
  });

  it('halves pages whose versions delimited by hash would cost their searches more than a bound, and grows them back after', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink, stops } = await followingFrom101(nodes);
    // Every version delimited, in pages of about 2 MB: ten of them would hash about 10 MB.
    const pad = 'x'.repeat(2 * 1024 * 1024);
    nodes.answer = (start, limit) => {
      const last = Math.min(Number(start) + limit - 1, nodes.tip);
      const delimited = Array.from({ length: last - Number(start) + 1 }, (_, i) => Number(start) + i);
      return start < 120n ? { body: Buffer.from(JSON.stringify({ delimited, pad })) } : undefined;
    };
    await ledgerAt(nodes, { follower, watermark }, 140, 5000);
    expect(stops).toEqual([]);
    expect(sink.applied).toEqual(versionsFrom(101, 140));
    // 10 delimited: halved; 5: halved; 3 (3 MB of searches): kept; after pages without any, doubled back.
    expect(nodes.asked.map((a) => `${a.start}/${a.limit}`)).toEqual([
      '101/10',
      '111/5',
      '116/3',
      '119/3',
      '122/3',
      '125/6',
      '131/10',
    ]);
  });

  it('keeps what it covers when no node answers a page, and asks again', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink, stops } = await followingFrom101(nodes);
    let failures = 3;
    nodes.answer = () => (failures-- > 0 ? 'throw' : undefined);
    await ledgerAt(nodes, { follower, watermark }, 105);
    expect(stops).toEqual([]);
    expect(sink.events).toEqual(['restart 101']);
    expect(nodes.asked.map((a) => a.start)).toEqual([101n, 101n, 101n, 101n]);
  });

  it('says once, at warn, that a node refuses the feed, and keeps asking', async () => {
    const nodes = new ScriptedNodes();
    const { watermark, stops, lines } = await followingFrom101(nodes);
    nodes.answer = () => ({ status: 403, errorCode: 'api_disabled' });
    nodes.tip = 101;
    watermark.observe(info(101));
    await until(() => nodes.asked.length >= 3, 2000, 'three tries');
    const refused = lines.filter((l) => l.msg.startsWith('change feed: a node refused the page'));
    expect(refused.map((l) => l.level)).toEqual([40, ...refused.slice(1).map(() => 20)]);
    expect(stops).toEqual([]);
  });

  /** A follower started at 101 that fell 100 versions behind (maxLagVersions 50), stopped for lag, and started afresh at 201. */
  async function restartedForLag() {
    const nodes = new ScriptedNodes();
    const followed = await followingFrom101(nodes, { maxLagVersions: 50 });
    const { watermark, sink, stops } = followed;
    nodes.answer = () => 'throw';
    nodes.tip = 200;
    watermark.observe(info(200));
    await until(() => stops.includes('behind'), 2000, 'a stop for lag');
    nodes.answer = () => undefined;
    await until(
      () => sink.events.includes('restart 201'),
      2000,
      () => `a restart after 200: ${sink.events}`,
    );
    return { nodes, ...followed };
  }

  it('starts afresh when it falls too far behind', async () => {
    await restartedForLag();
  });

  it('keeps following after a stop for lag, and stops when told', async () => {
    const { nodes, follower, watermark } = await restartedForLag();
    // Longer than retryMs: a sleep from before the restart must not end the one after it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    nodes.tip = 205;
    watermark.observe(info(205));
    await until(
      () => follower.next === 206n,
      2000,
      () => `a page from 201 (asked ${nodes.asked.map((a) => a.start)})`,
    );
    await within(follower.stop(), 2000, 'the stop');
  });

  it('covers nothing after its loop fails, and can be started again', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark, sink } = await followingFrom101(nodes);
    // A sink that refuses what it is given is the follower's own fault: its loop ends.
    const apply = sink.apply.bind(sink);
    sink.apply = () => {
      throw new Error('planted');
    };
    nodes.tip = 101;
    watermark.observe(info(101));
    await until(() => !follower.running, 2000, 'the loop to end');
    expect(sink.events.at(-1)).toBe('stop');
    sink.apply = apply;
    follower.start();
    await until(() => sink.events.at(-1) === 'restart 102', 2000, 'a new start');
  });

  it('waits intervalMs between pages once it has caught up', async () => {
    const nodes = new ScriptedNodes();
    const { follower, watermark } = await followingFrom101(nodes, { intervalMs: 60_000 });
    await ledgerAt(nodes, { follower, watermark }, 101);
    nodes.tip = 102;
    watermark.observe(info(102));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(nodes.asked).toHaveLength(1);
  });

  it('stops covering when it is stopped', async () => {
    const nodes = new ScriptedNodes();
    const { follower, sink } = await followingFrom101(nodes);
    await follower.stop();
    expect(sink.events.at(-1)).toBe('stop');
    expect(follower.running).toBe(false);
  });
});
