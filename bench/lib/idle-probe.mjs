// Where an idle capsule's memory goes, measured in a process of its own (run with the capsule's Node flags
// and --expose-gc): anonymous memory (/proc/self/smaps_rollup) and V8's heap after a full collection, at a
// bare start and after each part the capsule adds, in the order it adds them. Prints one JSON line.
// Usage: node --expose-gc [flags] bench/lib/idle-probe.mjs <repo root>
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

const root = process.argv[2];
const require = createRequire(join(root, 'package.json'));

function sample(step) {
  globalThis.gc();
  globalThis.gc();
  const rollup = readFileSync('/proc/self/smaps_rollup', 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
  return {
    step,
    anonKiB: kib('Anonymous'),
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    codeSpace: (spaces.code_space ?? 0) + (spaces.code_large_object_space ?? 0),
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

const steps = [sample('bare node')];
// 1. The capsule's code, loaded as bin/jackin-capsule.js loads it (its bundle, with the V8 code cache).
const { loadWithCodeCache } = require(join(root, 'dist', 'code-cache.bundle.cjs'));
loadWithCodeCache(join(root, 'dist', 'jackin-capsule.bundle.cjs'), join(root, 'dist', 'jackin-capsule.bundle.cache'));
steps.push(sample('capsule code (bundle and code cache)'));
// 2. node-pty's native module and one program on a PTY, read as the session reads it.
const pty = require('@lydell/node-pty');
const term = pty.spawn('/bin/sh', ['-c', 'exec cat'], {
  name: 'xterm-256color',
  rows: 30,
  cols: 120,
  cwd: root,
  env: { PATH: process.env.PATH ?? '' },
  encoding: null,
});
term.onData(() => undefined);
steps.push(sample('node-pty and one PTY'));
// 3. The screen model of a 30 × 120 session with a full screen of text, after a repaint (its serializer).
// Loaded from the tsc output: xterm's code a second time (the bundle holds its own), counted in this step.
const { ScreenModel } = await import(pathToFileURL(join(root, 'dist', 'capsule', 'screen', 'screen-model.js')).href);
const model = new ScreenModel({ rows: 30, cols: 120 });
for (let i = 0; i < 30; i++) model.write(Buffer.from(`\x1b[1;3${i % 8}mline ${i} ${'x'.repeat(100)}\x1b[0m\r\n`));
await model.settle();
model.repaint();
steps.push(sample('screen model: xterm code + a 30 × 120 model'));
const model2 = new ScreenModel({ rows: 30, cols: 120 });
for (let i = 0; i < 30; i++) model2.write(Buffer.from(`\x1b[1;3${i % 8}mline ${i} ${'x'.repeat(100)}\x1b[0m\r\n`));
await model2.settle();
model2.repaint();
steps.push(sample('a second 30 × 120 model (the model alone)'));
term.kill('SIGKILL');
process.stdout.write(`${JSON.stringify(steps)}\n`);
process.exit(0);
