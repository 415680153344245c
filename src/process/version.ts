// The version `--version` prints: the version in the package.json this code was
// installed with (next to dist/ in the image and in a checkout).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'ledger-proxy';

/** The version of the nearest package.json named ledger-proxy, walking up from this module. */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = readPackage(join(dir, 'package.json'));
    if (pkg?.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function readPackage(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}
