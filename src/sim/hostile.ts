// The hostile fault modes: a node that answers, but with something a proxy must
// not take as it comes. Each starts from the answer the node would have given
// (its status, content type and ledger headers), so only the one thing under test
// is wrong.
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { SIM_U64_MAX } from './parse/u64.js';
import type { SimFault, SimHostileMode } from './faults.js';
import { writeHead, writeReply } from './http-io.js';
import { simLedgerHeaders } from './ledger-headers.js';
import type { SimContext, SimReply } from './reply.js';

const SIM_HOSTILE_MODES: readonly SimHostileMode[] = [
  'gzipBomb',
  'hugeBody',
  'headerAhead',
  'headerBehind',
  'wrongBody',
  'endlessBody',
];

const GZIP_BOMB_BYTES = 1024 * 1024 * 1024;
const HUGE_BODY_BYTES = 200 * 1000 * 1000;
const BEHIND_VERSIONS = 1000n;
const ENDLESS_PIECE_BYTES = 1024;
const ENDLESS_EVERY_MS = 10;

/** One gzip member of this many zeros; members in a row decode as one body. */
const BOMB_MEMBER_BYTES = 1024 * 1024;
let bombMember: Buffer | undefined;

export function isHostile(mode: SimFault['mode']): mode is SimHostileMode {
  return (SIM_HOSTILE_MODES as readonly string[]).includes(mode);
}

/** Writes the hostile version of `out` (the answer the node would have given). */
export function writeHostile(
  res: ServerResponse,
  fault: SimFault & { mode: SimHostileMode },
  out: SimReply,
  ctx: SimContext,
  gzip: boolean,
): void {
  if (res.destroyed || res.writableEnded) return;
  switch (fault.mode) {
    case 'headerAhead':
      return writeReply(res, aheadHeaders(out, ctx, fault.versions), gzip);
    case 'headerBehind':
      return writeReply(res, behindHeaders(out, ctx, fault.versions ?? BEHIND_VERSIONS), gzip);
    case 'gzipBomb':
      return writeBomb(res, out, fault.bytes ?? GZIP_BOMB_BYTES);
    case 'hugeBody':
      return writeHuge(res, out, fault.bytes ?? HUGE_BODY_BYTES);
    case 'wrongBody':
      return writeReply(res, { ...out, body: wrongBody(out) }, gzip);
    case 'endlessBody':
      return writeEndless(res, out, fault.bytes ?? ENDLESS_PIECE_BYTES);
  }
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * Other data of the same shape, as a node that lies would send: still valid JSON
 * (a digit changed, or a space added), or another body's last byte changed.
 */
function wrongBody(out: SimReply): Buffer {
  const body = Buffer.from(out.body);
  if (!(out.headers['content-type'] ?? '').includes('json')) {
    if (body.length === 0) return Buffer.of(0);
    body[body.length - 1] ^= 1;
    return body;
  }
  const at = body.findIndex((b) => b >= DIGIT_0 && b <= DIGIT_9);
  if (at < 0) return Buffer.concat([body, Buffer.from(' ')]);
  body[at] = body[at] === DIGIT_9 ? DIGIT_9 - 1 : body[at] + 1;
  return body;
}

/** The ledger version header `versions` ahead of the answer's (default: the largest u64). */
function aheadHeaders(out: SimReply, ctx: SimContext, versions: bigint | undefined): SimReply {
  const name = versionHeader(ctx);
  const current = out.headers[name];
  if (current === undefined) return out;
  const ahead = versions === undefined ? SIM_U64_MAX : BigInt(current) + versions;
  return { ...out, headers: { ...out.headers, [name]: String(ahead > SIM_U64_MAX ? SIM_U64_MAX : ahead) } };
}

/** All seven ledger headers those of the snapshot `versions` before the one the data was read at. */
function behindHeaders(out: SimReply, ctx: SimContext, versions: bigint): SimReply {
  const current = out.headers[versionHeader(ctx)];
  if (current === undefined) return out;
  const at = BigInt(current) > versions ? BigInt(current) - versions : 0n;
  return { ...out, headers: { ...out.headers, ...simLedgerHeaders(ctx.headerNames, ctx.ledger.snapshotAt(at)) } };
}

function versionHeader(ctx: SimContext): string {
  return ctx.headerNames.ledger.find(([name]) => name.endsWith('-ledger-version'))![0];
}

/** `bytes` zeros as gzip members in a row: about a thousandth of it is sent. */
function writeBomb(res: ServerResponse, out: SimReply, bytes: number): void {
  bombMember ??= gzipSync(Buffer.alloc(BOMB_MEMBER_BYTES));
  const members = Math.max(1, Math.ceil(bytes / BOMB_MEMBER_BYTES));
  writeHead(res, out.status, { ...out.headers, 'content-encoding': 'gzip' }, members * bombMember.length);
  writeRepeated(res, bombMember, members * bombMember.length);
}

/** `bytes` of body, sent as it is (no Content-Encoding), in pieces of one reused buffer. */
function writeHuge(res: ServerResponse, out: SimReply, bytes: number): void {
  const piece = Buffer.alloc(Math.min(bytes, 1024 * 1024), 0x42);
  writeHead(res, out.status, out.headers, bytes);
  writeRepeated(res, piece, bytes);
}

/** Writes `piece` until `total` bytes went out, waiting for the socket to drain between pieces. */
function writeRepeated(res: ServerResponse, piece: Buffer, total: number): void {
  let sent = 0;
  const more = (): void => {
    while (sent < total && !res.destroyed) {
      const part = total - sent >= piece.length ? piece : piece.subarray(0, total - sent);
      sent += part.length;
      if (!res.write(part)) {
        res.once('drain', more);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  more();
}

/**
 * The answer, then spaces (JSON whitespace: the body never stops being a valid
 * prefix) a piece every ENDLESS_EVERY_MS, for as long as the client reads: a
 * node that never finishes its answer. Chunked: no length is ever reached.
 */
function writeEndless(res: ServerResponse, out: SimReply, bytes: number): void {
  const piece = Buffer.alloc(bytes, 0x20);
  writeHead(res, out.status, out.headers, null);
  res.write(out.body);
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    // A client that is not reading gets no more: the node waits, as a node's socket would.
    if (res.writableNeedDrain) return;
    res.write(piece);
  }, ENDLESS_EVERY_MS);
  res.once('close', () => clearInterval(timer));
}
