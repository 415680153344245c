// node bench/walk.mjs [--base=DIR] [--routes=view_json,raw_item] [--list]
// The walk of one memory hit through the code: which files of src/ (rooms) the running
// code passes through, from the bytes reaching a lane connection to the reply written.
// Each build (this checkout's dist/, and DIR's when given) runs in a process of its own
// with a proxy and a sim (lib/inproc.mjs); after a thousand hits have warmed it, one
// more hit runs under the inspector, stepping into every statement of the proxy's code
// (node's own modules and node_modules/ are stepped over: code they call back is not).
// A move is a step that lands in another file than the step before, by a call or a
// return; a re-entry is a move into a file this hit has already been in. --list prints
// the trip, one line per stay: the file and the function it is in.
import { spawnSync } from 'node:child_process';
import { Session } from 'node:inspector';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInProcess } from './lib/inproc.mjs';

const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));

if (arg('child') !== undefined) await child(arg('child'), arg('route'));
else parent();

function parent() {
  const builds = [here, ...(arg('base') ? [resolve(arg('base'))] : [])];
  const routes = arg('routes', 'view_json,raw_item').split(',');
  const list = process.argv.includes('--list');
  for (const route of routes)
    for (const build of builds) {
      const run = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), `--child=${build}`, `--route=${route}`],
        {
          encoding: 'utf8',
        },
      );
      if (run.status !== 0) throw new Error(`${build} ${route}: ${run.stderr}`);
      const { stays } = JSON.parse(run.stdout);
      const entered = new Set();
      let reentries = 0;
      for (const stay of stays) {
        if (entered.has(stay.room)) reentries++;
        entered.add(stay.room);
      }
      const which = build === here ? 'this' : 'base';
      const steps = stays.reduce((n, stay) => n + stay.steps, 0);
      if (list) for (const stay of stays) console.log(`  ${stay.room} ${stay.fn} (${stay.steps} steps)`);
      console.log(
        `${route} ${which}: ${entered.size} rooms, ${stays.length - 1} moves, ${reentries} re-entries, ${steps} steps`,
      );
    }
}

async function child(root, routeId) {
  const proxy = await startInProcess(root, routeId, 2);
  for (let i = 0; i < 1000; i++) proxy.send(proxy.requests[i % 2].bytes);
  proxy.expectHits(1000);
  const dist = `${root}/dist/`;
  const session = new Session();
  session.connect();
  const urls = new Map();
  session.on('Debugger.scriptParsed', (m) => urls.set(m.params.scriptId, m.params.url));
  session.post('Debugger.enable');
  session.post('Debugger.setBlackboxPatterns', { patterns: ['^node:', '/node_modules/'] });
  const stays = [];
  let walking = false;
  session.on('Debugger.paused', ({ params }) => {
    if (!walking) return session.post('Debugger.resume');
    const frame = params.callFrames[0];
    const url = urls.get(frame.location.scriptId) ?? '';
    // A step in this harness (its fake socket taking the reply) is in no room.
    if (url.startsWith(`file://${dist}`)) {
      const room = `src/${relative(dist, fileURLToPath(url)).replace(/\.js$/, '.ts')}`;
      if (stays.at(-1)?.room === room) stays.at(-1).steps++;
      else stays.push({ room, fn: frame.functionName || '(anonymous)', steps: 1 });
    }
    session.post('Debugger.stepInto');
  });
  walking = true;
  // biome-ignore lint/suspicious/noDebugger: the walk's first pause; it steps from here into the hit
  debugger;
  proxy.send(proxy.requests[0].bytes);
  walking = false;
  session.post('Debugger.disable');
  proxy.expectHits(1001);
  console.log(JSON.stringify({ stays }));
  await proxy.close();
  process.exit(0);
}
