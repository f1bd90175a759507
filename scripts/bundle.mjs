// Bundles the built modules (dist/, from tsc) into one file per entry point, which is what the binaries run:
// loading one module instead of about 120 takes a third off jackin's start-up (bench/RESULTS.md, container
// section). Packages stay external (loaded from node_modules as usual) but for xterm's and commander, below.
// Run by `npm run build` after tsc.
// Then writes the V8 code caches the two CLIs' bundles are loaded with (src/cli/code-cache.ts).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Bundle (dist/<name>.bundle.cjs) -> the tsc output it starts from. All are CommonJS: the binaries
 * (CommonJS too, bin/package.json) load them without Node's ES module loader, which starts an exec relay
 * about 10 ms sooner on this machine, and the two CLIs with their code cache (src/cli/code-cache.ts).
 */
export const ENTRIES = [
  { name: 'jackin', from: 'dist/cli/jackin.js' },
  { name: 'jackin-capsule', from: 'dist/cli/jackin-capsule.js' },
  // The exec relay's fast path (bin/jackin-capsule.js): started once per `attach --via` and per export.
  { name: 'attach-proxy', from: 'dist/cli/attach-proxy-main.js' },
  // What bin/jackin.js loads first: starts an `attach --via` relay before the CLI loads.
  { name: 'early-relay', from: 'dist/cli/early-relay.js' },
  // What the binaries load the two CLIs' bundles with.
  { name: 'code-cache', from: 'dist/cli/code-cache.js' },
];

/** The bundles the binaries load with a code cache (src/cli/code-cache.ts), written beside each as .cache. */
export const CACHED = ['jackin', 'jackin-capsule'];

// Every bundle and cache is made again below; one of an earlier layout (dist/jackin.bundle.js, before all
// were CommonJS) would otherwise stay in a work tree, unused but listed by the bundle and package tests.
for (const f of readdirSync(`${root}dist`)) if (/\.bundle\.(c?js|cache)$/.test(f)) rmSync(`${root}dist/${f}`);

// Packages stay external, loaded from node_modules, except xterm's two and commander: the capsule's screen
// model, the largest code it loads, and the command line parser both CLIs load at every start are then
// compiled from their code cache with the rest (src/cli/code-cache.ts).
const BUNDLED_PACKAGES = ['@xterm/headless', '@xterm/addon-serialize', 'commander'];
const { dependencies } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const external = Object.keys(dependencies)
  .filter((name) => !BUNDLED_PACKAGES.includes(name))
  .flatMap((name) => [name, `${name}/*`]);

await build({
  absWorkingDir: root,
  entryPoints: ENTRIES.map((e) => ({ in: e.from, out: `${e.name}.bundle` })),
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  external,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  // Stack traces and error names stay readable: nothing is minified or renamed.
  keepNames: true,
  // CommonJS has no import.meta; src/ reads only its url (package-root.ts, createRequire calls).
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: 'const __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
});

// Each in a child `node` with the flags its binary runs with (a cache made under other flags is refused, and
// the bundle then compiles as usual): `jackin` with none, the capsule with CAPSULE_NODE_FLAGS. Each child
// runs the bundle's warm-up first (src/cli/code-cache-warm-up.ts) and prints the cache's size.
const { CAPSULE_NODE_FLAGS } = await import(`${root}dist/host/instances/container-run-argv.js`);
const FLAGS = { jackin: [], 'jackin-capsule': CAPSULE_NODE_FLAGS };
const writer = `require(process.argv[1]).writeCodeCache(process.argv[2], process.argv[2].replace(/\\.cjs$/, '.cache'))
  .then((size) => { console.log(size); process.exit(0); }, (e) => { console.error(e); process.exit(1); });`;
const sizes = CACHED.map((name) =>
  Number(
    execFileSync(process.execPath, [...FLAGS[name], '-e', writer, `${root}dist/code-cache.bundle.cjs`, `${root}dist/${name}.bundle.cjs`], {
      encoding: 'utf8',
    }).trim(),
  ),
);
CACHED.forEach((name, i) => {
  if (!(sizes[i] > 0)) throw new Error(`bundle: the code cache of dist/${name}.bundle.cjs is empty (${sizes[i]})`);
});
