// node bench/walk.mjs [--base=DIR] [--routes=view_json,raw_item] [--list]
// The walk of one memory hit through the code (lib/walk.mjs): rooms, moves and
// re-entries, for this checkout's build and DIR's when given. --list prints the trip,
// one line per stay: the file, the function it began in, and its steps.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { walkHit } from './lib/walk.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const builds = [here, ...(arg('base') ? [resolve(arg('base'))] : [])];
const list = process.argv.includes('--list');

for (const route of arg('routes', 'view_json,raw_item').split(','))
  for (const build of builds) {
    const walk = walkHit(build, route);
    if (list) for (const stay of walk.stays) console.log(`  ${stay.room} ${stay.fn} (${stay.steps} steps)`);
    console.log(
      `${route} ${build === here ? 'this' : 'base'}: ${walk.rooms} rooms, ${walk.moves} moves, ${walk.reentries} re-entries, ${walk.steps} steps`,
    );
  }
