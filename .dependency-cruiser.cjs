// The import rules of docs/design.md "Layout", checked by dependency-cruiser in
// `npm run lint` (`npx depcruise src --config .dependency-cruiser.cjs`):
// - every file of src/ is in a room, and an import never runs back up: the rooms
//   below are listed top to bottom, floor by floor, and a room imports only itself
//   and the rooms listed after it;
//   the read path (serve/) knows the shared tier by its interface, not cache/redis/;
// - no circles between files, type-only imports included;
// - the simulated node and the demo are reached only through the seam
//   src/wiring/sim.ts, and the sim imports nothing of the product above the
//   vocabulary, nor the proxy's canonicalisation (wire/): it parses requests
//   with its own code (sim/parse/, which imports nothing else); nor the proxy's
//   reader of transaction pages (writes/): it writes its pages with its own encoder;
// - each of these packages is imported only in the rooms that own it: undici in
//   the transport, ioredis in the Redis tier, fastify in the listeners and their
//   composition, prom-client in metrics (and the cluster's aggregation),
//   @opentelemetry in tracing (its SDK loaded lazily, only when tracing is on);
// - no file that nothing imports and that imports nothing, nothing of test/ or
//   bench/, no import that does not resolve, and no package the production
//   install (npm ci --omit=dev) lacks.

/** The floors, top to bottom, each with its rooms in order: [room, the path of its files]. */
const FLOORS = [
  [
    'composition',
    [
      ['main.ts', '^src/main\\.ts$'],
      ['demo/', '^src/demo/'],
      ['app.ts', '^src/app\\.ts$'],
      ['cluster/', '^src/cluster/'],
      ['wiring/', '^src/wiring/'],
    ],
  ],
  [
    'listeners',
    [
      ['admin/', '^src/admin/'],
      ['http/', '^src/http/(?!lane/)'],
      ['http/lane/', '^src/http/lane/'],
    ],
  ],
  ['metrics', [['metrics/', '^src/metrics/']]],
  [
    'answering a client',
    [
      ['responder/', '^src/responder/'],
      ['reply/', '^src/reply/'],
      ['edge/', '^src/edge/'],
    ],
  ],
  [
    'reading',
    [
      ['serve/', '^src/serve/'],
      ['routes/', '^src/routes/'],
      ['freshness/', '^src/freshness/'],
      ['cache/redis/', '^src/cache/redis/'],
      ['cache/', '^src/cache/(?!redis/)'],
      ['upstream/', '^src/upstream/(?!(?:nodes|transport)/)'],
      ['upstream/nodes/', '^src/upstream/nodes/'],
      ['upstream/transport/', '^src/upstream/transport/'],
    ],
  ],
  [
    'vocabulary',
    [
      ['model/', '^src/model/'],
      ['ledger/', '^src/ledger/'],
      ['tracing/', '^src/tracing/'],
      ['errors.ts', '^src/errors\\.ts$'],
    ],
  ],
  [
    'foundations',
    [
      ['process/', '^src/process/'],
      ['config/', '^src/config/'],
      ['writes/', '^src/writes/'],
      ['wire/', '^src/wire/'],
      ['timing/', '^src/timing/'],
    ],
  ],
];

const ROOMS = FLOORS.flatMap(([floor, rooms]) => rooms.map(([room, path]) => ({ floor, room, path })));

/** One rule per room: nothing it imports is listed before it. */
const upward = ROOMS.slice(1).map(({ floor, room, path }, i) => {
  const above = ROOMS.slice(0, i + 1);
  return {
    name: `not-up-from-${room.replace(/\.ts$|\/$/, '').replaceAll('/', '-')}`,
    comment:
      `${room} (floor: ${floor}) imports only itself and the rooms below it; ` +
      `it may not import ${above.map((r) => r.room).join(', ')} (docs/design.md, Layout)`,
    severity: 'error',
    from: { path },
    to: { path: above.map((r) => r.path).join('|') },
  };
});

/** The simulated node's rooms: on no floor, each file in one all the same. */
const SIM_ROOMS = [
  ['sim/', '^src/sim/[^/]+$'],
  ['sim/handlers/', '^src/sim/handlers/'],
  ['sim/state/', '^src/sim/state/'],
  ['sim/sparse/', '^src/sim/sparse/'],
  ['sim/feed/', '^src/sim/feed/'],
  ['sim/parse/', '^src/sim/parse/'],
];

/** Every file of src/ is in one of the rooms, or in one of the sim's. */
const IN_A_ROOM = [...ROOMS.map((r) => r.path), ...SIM_ROOMS.map(([, path]) => path)].join('|');

const SEAM = '^src/wiring/sim\\.ts$';
const VOCABULARY_AND_BELOW = FLOORS.slice(FLOORS.findIndex(([floor]) => floor === 'vocabulary'))
  .flatMap(([, rooms]) => rooms.map(([, path]) => path))
  .join('|');

/** An npm package's files, wherever node_modules sits. */
const pkg = (name) => `(^|/)node_modules/${name}/`;

/** A package imported only from the files at `allowed`. */
const confined = (name, packages, allowed, why) => ({
  name,
  comment: why,
  severity: 'error',
  from: { path: '^src/', pathNot: allowed },
  to: { path: packages.map(pkg).join('|') },
});

const TRACING_SDK = ['@opentelemetry/(?!api/)[^/]+'];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'files do not import each other round a circle (type-only imports count too)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'in-a-room',
      comment:
        'a file of src/ sits in a room of FLOORS (or of SIM_ROOMS): a new room takes its place there and in docs/design.md',
      severity: 'error',
      from: { path: '^src/', pathNot: IN_A_ROOM },
      to: {},
    },
    {
      name: 'into-a-room',
      comment: 'an import goes to a file in a room of FLOORS (or of SIM_ROOMS), where the rules can judge it',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: IN_A_ROOM },
    },
    {
      name: 'serve-knows-the-store-interface',
      comment: 'the read path knows the shared tier by cache/store.ts and serve/ports.ts, not by Redis',
      severity: 'error',
      from: { path: '^src/serve/' },
      to: { path: '^src/cache/redis/' },
    },
    {
      name: 'sim-through-the-seam',
      comment: 'product code reaches the simulated node only through src/wiring/sim.ts (the demo may use it too)',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(sim|demo)/|${SEAM}` },
      to: { path: '^src/sim/' },
    },
    {
      name: 'seam-loads-the-sim-lazily',
      comment:
        'src/wiring/sim.ts loads the sim with import() when an upstream is sim; it names its types only as types',
      severity: 'error',
      from: { path: SEAM },
      to: { path: '^src/sim/', dependencyTypesNot: ['dynamic-import', 'type-only', 'type-import'] },
    },
    {
      name: 'demo-through-the-seam',
      comment: 'the demo is an entry point (npm run demo): product code does not import it',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/demo/|${SEAM}` },
      to: { path: '^src/demo/' },
    },
    {
      name: 'sim-stands-alone',
      comment: 'the simulated node imports nothing of the product above the vocabulary floor (model/, ledger/, wire/…)',
      severity: 'error',
      from: { path: '^src/sim/' },
      to: { path: '^src/', pathNot: `^src/sim/|${VOCABULARY_AND_BELOW}` },
    },
    {
      name: 'sim-parses-its-own-input',
      comment:
        'the simulated node reads requests with its own parsers (sim/parse/, written from a node’s), never the ' +
        'proxy’s canonicalisation (wire/): a bug there then shows as a difference instead of hiding in both',
      severity: 'error',
      from: { path: '^src/sim/' },
      to: { path: '^src/wire/' },
    },
    {
      name: 'sim-encodes-its-own-feed',
      comment:
        'the simulated node writes its transaction pages with its own encoder, never with the proxy’s reader of them ' +
        '(writes/): a misreading of the layout then shows as a difference instead of hiding in both',
      severity: 'error',
      from: { path: '^src/sim/' },
      to: { path: '^src/writes/' },
    },
    {
      name: 'sim-parsers-stand-alone',
      comment: 'sim/parse/ is the bottom of the sim: its parsers import nothing but each other',
      severity: 'error',
      from: { path: '^src/sim/parse/' },
      to: { path: '^src/', pathNot: '^src/sim/parse/' },
    },
    confined('undici-in-the-transport', ['undici'], '^src/upstream/transport/', 'only the transport calls nodes'),
    confined(
      'ioredis-in-the-redis-tier',
      ['ioredis'],
      '^src/cache/redis/',
      'only cache/redis/ speaks to Redis; the rest knows it by interfaces (cache/store.ts, serve/ports.ts, ' +
        'edge/window-counters.ts)',
    ),
    confined(
      'fastify-in-the-listeners',
      ['fastify'],
      '^src/(admin|http|cluster|wiring)/|^src/app\\.ts$',
      'fastify serves the listeners: admin/, http/ and what composes them',
    ),
    confined(
      'proxy-addr-in-the-edge',
      ['@fastify/proxy-addr'],
      '^src/edge/',
      "the client's address is the edge's to decide",
    ),
    confined(
      'prom-client-in-metrics',
      ['prom-client'],
      '^src/(metrics|cluster)/',
      'metrics/ owns the registry; cluster/ aggregates the workers’ registries',
    ),
    confined(
      'opentelemetry-api-in-tracing',
      ['@opentelemetry/api'],
      '^src/(tracing|reply)/',
      'spans go through tracing/ (reply/request-span.ts names their attribute type)',
    ),
    confined(
      'tracing-sdk-in-its-file',
      TRACING_SDK,
      '^src/tracing/sdk\\.ts$',
      'the OpenTelemetry SDK is loaded only when tracing is on, from tracing/sdk.ts',
    ),
    {
      name: 'tracing-sdk-loaded-lazily',
      comment: 'tracing/sdk.ts is loaded with import() when tracing is on, never at startup',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/tracing/sdk\\.ts$', dependencyTypesNot: ['dynamic-import', 'type-only', 'type-import'] },
    },
    {
      name: 'not-to-test-or-bench',
      comment: 'product code imports nothing of test/ or bench/',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-orphans',
      comment: 'a file that imports nothing and that nothing imports is dead, or lost',
      severity: 'error',
      from: { orphan: true, path: '^src/' },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that does not resolve escapes every other rule',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'the production install (npm ci --omit=dev) has no devDependencies',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-non-package-json',
      comment: 'a package not in package.json is there by accident, and absent from a clean install',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle or an upward import through types is one all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Package paths read node_modules/<name>/ where node_modules is a link (a git worktree's).
    preserveSymlinks: true,
  },
};
