// Bundles the built modules (dist/, from tsc) into one file per entry point, which is what the binaries run:
// loading one module instead of about 120 takes a third off jackin's start-up (bench/RESULTS.md, container
// section). Packages stay external (loaded from node_modules as usual). Run by `npm run build` after tsc.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Bundle (dist/<name>.bundle.<ext>) -> the tsc output it starts from. The two small ones are CommonJS: the
 * binaries (CommonJS too, bin/package.json) load them first, before Node's ES module loader is needed,
 * which starts an exec relay about 10 ms sooner on this machine.
 */
export const ENTRIES = [
  { name: 'jackin', from: 'dist/cli/jackin.js', format: 'esm' },
  { name: 'jackin-capsule', from: 'dist/cli/jackin-capsule.js', format: 'esm' },
  // The exec relay's fast path (bin/jackin-capsule.js): started once per `attach --via` and per export.
  { name: 'attach-proxy', from: 'dist/cli/attach-proxy-main.js', format: 'cjs' },
  // What bin/jackin.js loads first: starts an `attach --via` relay before the CLI loads.
  { name: 'early-relay', from: 'dist/cli/early-relay.js', format: 'cjs' },
];

for (const format of ['esm', 'cjs']) {
  await build({
    absWorkingDir: root,
    entryPoints: ENTRIES.filter((e) => e.format === format).map((e) => ({ in: e.from, out: `${e.name}.bundle` })),
    outdir: 'dist',
    outExtension: { '.js': format === 'esm' ? '.js' : '.cjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format,
    target: 'node20',
    logLevel: 'warning',
    // Stack traces and error names stay readable: nothing is minified or renamed.
    keepNames: true,
  });
}
