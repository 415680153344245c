// One memory hit stepped through under node:inspector (lib/walk.mjs says what is
// counted): a proxy and a sim in this process (lib/inproc.mjs, built in the checkout
// `root`), a thousand hits of the route to warm it, then one more, stepping into every
// statement of the proxy's code. Prints the trip as JSON: one stay per run of steps in
// one file of src/ (`room`), with the function it began in and its steps.
// node bench/proc/walk.mjs ROOT ROUTE
import { Session } from 'node:inspector';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startInProcess } from '../lib/inproc.mjs';

const [given, routeId] = process.argv.slice(2);
const root = resolve(given);
const proxy = await startInProcess(root, routeId, 2);
for (let i = 0; i < 1000; i++) proxy.send(proxy.requests[i % 2].bytes);
proxy.expectHits(1000);
const dist = join(root, 'dist');
const distUrl = `${pathToFileURL(dist).href}/`;
const session = new Session();
session.connect();
const urls = new Map();
session.on('Debugger.scriptParsed', (m) => urls.set(m.params.scriptId, m.params.url));
session.post('Debugger.enable');
// Node's own modules and the dependencies are stepped over; what they call back in the proxy is not.
session.post('Debugger.setBlackboxPatterns', { patterns: ['^node:', '/node_modules/'] });
const stays = [];
let walking = false;
session.on('Debugger.paused', ({ params }) => {
  if (!walking) return session.post('Debugger.resume');
  const frame = params.callFrames[0];
  const url = urls.get(frame.location.scriptId) ?? '';
  // A step in the harness (its fake socket taking the reply) is in no room.
  if (url.startsWith(distUrl)) {
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
