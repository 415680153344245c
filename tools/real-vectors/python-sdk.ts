// aptos-python-sdk's BCS vectors (aptos_sdk/transactions.py's tests): hex strings of
// SignedTransactions, RawTransactions and RawTransactionWithData, and one committed hash.
import { BcsCursor } from '../../src/writes/cursor.js';
import { transactionHash } from '../../src/writes/hashes.js';
import { measureRawTransaction, measureSignedTransaction } from '../../src/writes/transaction.js';

export interface PythonReport {
  vectors: number;
  byKind: Record<string, { checked: number; matched: number }>;
  hashes: { checked: number; matched: number };
  failures: string[];
}

/** Where a RawTransactionWithData ends: 0 MultiAgent { raw_txn, secondary_signer_addresses }, 1 MultiAgentWithFeePayer { …, fee_payer_address }. */
function measureRawTransactionWithData(bytes: Uint8Array): number {
  const variant = bytes[0];
  if (variant !== 0 && variant !== 1) return -1;
  const c = new BcsCursor(bytes, measureRawTransaction(bytes, 1));
  c.skipFixedSequence(32);
  if (variant === 1) c.skip(32);
  return c.pos;
}

const MEASURES: Record<string, (bytes: Uint8Array) => number> = {
  SignedTransaction: (b) => measureSignedTransaction(b),
  RawTransaction: (b) => measureRawTransaction(b),
  RawTransactionWithData: measureRawTransactionWithData,
};

/** What a vector is, by the name the SDK's test gives it and the type it deserializes it as. */
function kindOf(name: string, test: string): string {
  if (name.startsWith('signed_transaction')) return 'SignedTransaction';
  if (name.startsWith('raw_transaction')) return 'RawTransaction';
  return /RawTransactionWithData\.deserialize|FeePayerRawTransaction\.deserialize/.test(test)
    ? 'RawTransactionWithData'
    : 'RawTransaction';
}

export function checkPythonVectors(source: string): PythonReport {
  const report: PythonReport = { vectors: 0, byKind: {}, hashes: { checked: 0, matched: 0 }, failures: [] };
  for (const test of source.split(/\n(?=\s+def test_)/)) {
    const testName = /def (test_\w+)/.exec(test)?.[1] ?? '?';
    // Keys are hex too: a vector is an input other than a key's.
    for (const [, name, hex] of test.matchAll(/(\w*input\w*) = "([0-9a-f]+)"/g)) {
      if (name!.includes('key')) continue;
      report.vectors++;
      const kind = kindOf(name!, test);
      const counts = (report.byKind[kind] ??= { checked: 0, matched: 0 });
      counts.checked++;
      const bytes = Uint8Array.from(Buffer.from(hex!, 'hex'));
      let end: number;
      try {
        end = MEASURES[kind]!(bytes);
      } catch (err) {
        end = -1;
        report.failures.push(`${testName}: ${name} (${kind}) does not read: ${(err as Error).message}`);
      }
      if (end === bytes.length) counts.matched++;
      else if (end >= 0) report.failures.push(`${testName}: ${name} (${kind}) ends at ${end} of ${bytes.length} bytes`);
      // The committed hash the test expects: Transaction::UserTransaction (variant 0) of these bytes.
      const expected = /\.hash\(\),\s*"0x([0-9a-f]{64})"/.exec(test)?.[1];
      if (kind === 'SignedTransaction' && expected !== undefined) {
        report.hashes.checked++;
        if (transactionHash(Uint8Array.from([0, ...bytes])).toString('hex') === expected) report.hashes.matched++;
        else report.failures.push(`${testName}: ${name} does not hash to ${expected}`);
      }
    }
  }
  return report;
}
