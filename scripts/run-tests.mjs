#!/usr/bin/env node
// Runs every test file through tsx's node:test integration.
// Node 20's `--test` finds no .ts files when given a folder or a quoted glob (and still exits 0), so the
// files are listed here explicitly. Usage: node scripts/run-tests.mjs [name-filter...]
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}
const filters = process.argv.slice(2);
const files = [...walk(join(root, 'src')), ...walk(join(root, 'test'))]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
// End-to-end tests run the built binaries, so build first.
const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(r.status ?? 1);
