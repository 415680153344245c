// The reply writer names the ledger headers as the vendor is now. With vendor: auto
// the names are the default vendor's until the nodes' probes say theirs; a snapshot
// the writer serialised before that is serialised again under the new names, not
// sent from its kept block.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { openExchange } from '../../src/edge/exchange.js';
import type { PublicReply, PublicRequest } from '../../src/edge/message.js';
import type { LedgerInfo } from '../../src/ledger/info.js';
import { liveHeaderNames, VendorIdentity } from '../../src/ledger/vendor.js';
import type { ReadResult } from '../../src/model/read-result.js';
import { ReplyWriter } from '../../src/reply/writer.js';

const LEDGER: LedgerInfo = {
  chainId: 4,
  epoch: 2n,
  ledgerVersion: 1000n,
  oldestLedgerVersion: 0n,
  ledgerTimestampUsec: 1_700_000_000_000_000n,
  blockHeight: 500n,
  oldestBlockHeight: 0n,
};

const RESULT: ReadResult = {
  status: 200,
  contentType: 'application/json',
  body: Buffer.from('["3"]'),
  ledger: LEDGER,
  cache: 'HIT',
  tier: 'memory',
};

/** The header names of one reply `writer` writes for RESULT (through writeHead: no lane). */
function headerNamesWritten(writer: ReplyWriter): string[] {
  let written: string[] = [];
  const req = {} as PublicRequest;
  const res = {
    req,
    writeHead: (_status: number, headers: string[]) => {
      written = headers;
    },
    end: () => undefined,
  } as unknown as PublicReply;
  writer.result(openExchange(req, res, 'view', 'req-1'), RESULT);
  return written.filter((_, i) => i % 2 === 0);
}

describe('the reply writer with vendor: auto', () => {
  it('names the ledger headers as the vendor is now, for a snapshot it already wrote too', () => {
    const identity = new VendorIdentity('auto', pino({ level: 'silent' }));
    const writer = new ReplyWriter(liveHeaderNames(identity), () => null);
    const before = headerNamesWritten(writer);
    expect(before).toContain('x-node-ledger-version');

    const node = { name: 'node0' };
    identity.observe(node, 'aptos');
    expect(identity.decide([node])).toBeNull();
    const after = headerNamesWritten(writer);
    expect(after).toContain('x-aptos-ledger-version');
    expect(after).toContain('x-aptos-chain-id');
    expect(after.filter((name) => name.startsWith('x-node-'))).toEqual([]);
  });
});
