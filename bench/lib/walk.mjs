// The walk of one memory hit through the code (bench/walk.mjs, and the bench's walk
// scenario): which files of src/ (rooms) the running code passes through, from the
// bytes reaching a lane connection to the reply written, stepped statement by
// statement under node:inspector (proc/walk.mjs). A move is a step that lands in
// another file than the step before, by a call or a return; a re-entry is a move into
// a file this hit has already been in. No clock is read: one build on one Node.js
// walks the same way every time.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const child = fileURLToPath(new URL('../proc/walk.mjs', import.meta.url));

/** One memory hit of `routeId` walked in the build of the checkout `root`: its stays, and what they add up to. */
export function walkHit(root, routeId) {
  const run = spawnSync(process.execPath, [child, root, routeId], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`walk of ${routeId} in ${root}: ${run.stderr}`);
  const { stays } = JSON.parse(run.stdout);
  // A hit runs the proxy's code: a walk that names no file of src/ looked in the wrong place.
  if (stays.length === 0) throw new Error(`the walk of ${routeId} in ${root} stepped into no file of src/`);
  const entered = new Set();
  let reentries = 0;
  for (const stay of stays) {
    if (entered.has(stay.room)) reentries++;
    entered.add(stay.room);
  }
  const steps = stays.reduce((n, stay) => n + stay.steps, 0);
  return { stays, rooms: entered.size, moves: stays.length - 1, reentries, steps };
}
