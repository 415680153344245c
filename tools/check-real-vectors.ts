// `npm run check:real-vectors -- <aptos-core checkout> <aptos-python-sdk checkout>`: holds
// src/writes/ to real bytes made elsewhere, which this repo does not carry:
// - aptos-core's indexer fixtures (ecosystem/indexer-grpc/indexer-test-transactions/src/
//   json_transactions/imported_mainnet_txns/*.json, real mainnet transactions): every table
//   item, resource and resource-group member change gives its recorded state_key_hash through
//   encodeStateKey (a member: its group's key, where the group is one of GROUPS);
// - aptos-python-sdk's aptos_sdk/transactions.py: every SignedTransaction vector is walked to
//   its end (and hashes to the committed hash the SDK's test expects, where it has one);
//   every RawTransaction and RawTransactionWithData vector likewise, as what it is.
// Prints the counts; exits 1 when a change or a vector does not match.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkFixtures } from './real-vectors/fixtures.js';
import { checkPythonVectors } from './real-vectors/python-sdk.js';

const [aptosCore, pythonSdk] = process.argv.slice(2);
if (aptosCore === undefined || pythonSdk === undefined) {
  process.stderr.write('usage: npm run check:real-vectors -- <aptos-core checkout> <aptos-python-sdk checkout>\n');
  process.exit(2);
}

const FIXTURES = 'ecosystem/indexer-grpc/indexer-test-transactions/src/json_transactions/imported_mainnet_txns';
const dir = join(aptosCore, FIXTURES);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const unreadable: string[] = [];
const fixtures = checkFixtures(
  files.flatMap((f) => {
    try {
      return [{ name: f, json: JSON.parse(readFileSync(join(dir, f), 'utf8')) }];
    } catch {
      unreadable.push(f);
      return [];
    }
  }),
);
const python = checkPythonVectors(readFileSync(join(pythonSdk, 'aptos_sdk/transactions.py'), 'utf8'));

const lines = [
  `aptos-core indexer fixtures: ${files.length} files, ${fixtures.changes} changes`,
  ...unreadable.map((f) => `  NOT JSON: ${f}`),
  ...Object.entries(fixtures.byKind).flatMap(([kind, c]) => [
    `  ${kind}: ${c.checked} checked, ${c.matched} matched, ${c.checked - c.matched} not matched`,
    ...Object.entries(c.asGroup).map(([group, n]) => `    of them members, by their group's key (${group}): ${n}`),
  ]),
  ...Object.entries(fixtures.notCheckable).map(([why, n]) => `  not checkable: ${n} (${why})`),
  ...fixtures.mismatches.map((m) => `  NOT MATCHED: ${m}`),
  `aptos-python-sdk transactions.py: ${python.vectors} vectors`,
  ...Object.entries(python.byKind).map(
    ([kind, c]) => `  ${kind}: ${c.checked} checked, ${c.matched} walked to their end`,
  ),
  `  committed hashes: ${python.hashes.checked} checked, ${python.hashes.matched} matched`,
  ...python.failures.map((f) => `  NOT MATCHED: ${f}`),
];
process.stdout.write(lines.join('\n') + '\n');
process.exit(fixtures.mismatches.length + unreadable.length + python.failures.length > 0 ? 1 : 0);
