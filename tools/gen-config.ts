// `npm run gen:config`: writes the JSON Schema of a config file and the
// configuration reference, both generated from the zod schema in src/config/.
// `npm run gen:config -- --check` writes nothing and exits 1 when either is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { JSON_SCHEMA_FILE, jsonSchemaText } from './config-reference/json-schema.js';
import { REFERENCE_FILE, referenceText } from './config-reference/markdown.js';

const check = process.argv.includes('--check');
let stale = false;
for (const [file, text] of [
  [JSON_SCHEMA_FILE, jsonSchemaText()],
  [REFERENCE_FILE, referenceText()],
] as const) {
  // npm runs scripts at the package's root, where the files' paths start.
  const path = file;
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale = true;
    process.stderr.write(`${file} is stale: run npm run gen:config\n`);
  } else {
    writeFileSync(path, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
process.exitCode = stale ? 1 : 0;
