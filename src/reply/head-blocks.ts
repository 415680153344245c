// The parts of a read's reply head that repeat from reply to reply, serialised
// once and kept (edge/message.ts HeadBlock): a content type, a snapshot's ledger
// headers (the writer keeps the last), and how the read was served. A transport
// that writes bytes as they are (the lane) copies them into the reply; node:http
// takes their pairs.
import type { CacheStatus, CacheTier } from '../model/read-result.js';
import type { HeadBlock } from '../edge/message.js';

export const NO_LINES: HeadBlock = { pairs: [], bytes: Buffer.alloc(0) };

/** A block of `pairs` with its bytes serialised now: for lines many replies repeat. */
export function keptBlock(pairs: readonly string[]): HeadBlock {
  let lines = '';
  for (let i = 0; i < pairs.length; i += 2) lines += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  return { pairs, bytes: Buffer.from(lines, 'latin1') };
}

/** Every block's pairs, in order: the head as writeHead takes it. */
export function flatten(blocks: readonly HeadBlock[]): string[] {
  const flat: string[] = [];
  for (const block of blocks) for (const item of block.pairs) flat.push(item);
  return flat;
}

/** Content types seen, each with its line kept: a node's answers carry a few; past this many, lines are made per reply. */
const MAX_CONTENT_TYPES = 64;
const contentTypes = new Map<string, HeadBlock>();
/** the content type asked last: hits of one route repeat it, and a comparison costs less than a lookup */
let lastType = '';
let lastTypeBlock: HeadBlock = NO_LINES;

export function contentTypeBlock(contentType: string): HeadBlock {
  if (contentType === lastType) return lastTypeBlock;
  let block = contentTypes.get(contentType);
  if (block === undefined) {
    const pairs = ['content-type', contentType];
    if (contentTypes.size >= MAX_CONTENT_TYPES) return { pairs };
    block = keptBlock(pairs);
    contentTypes.set(contentType, block);
  }
  lastType = contentType;
  lastTypeBlock = block;
  return block;
}

const cacheBlocks = new Map<CacheStatus, HeadBlock>();
const tierBlocks: Record<CacheTier, Map<CacheStatus, HeadBlock>> = { memory: new Map(), redis: new Map() };

/** The X-Cache line, and X-Cache-Tier's when the read came from a tier. */
export function cacheBlock(cache: CacheStatus, tier: CacheTier | undefined): HeadBlock {
  const blocks = tier === undefined ? cacheBlocks : tierBlocks[tier];
  let block = blocks.get(cache);
  if (block === undefined) {
    block = keptBlock(tier === undefined ? ['x-cache', cache] : ['x-cache', cache, 'x-cache-tier', tier]);
    blocks.set(cache, block);
  }
  return block;
}
