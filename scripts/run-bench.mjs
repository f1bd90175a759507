#!/usr/bin/env node
// Runs the benchmark sections and writes bench/RESULTS.md (raw numbers to bench/out/results.json).
// Usage: see USAGE below (`npm run bench -- --help`).
// Each section (bench/sections/*.mjs) exports { id, title, run({ quick, log }) → { data, markdown } }.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as attach from '../bench/sections/attach.mjs';
import * as paste from '../bench/sections/paste.mjs';
import * as exportSection from '../bench/sections/export.mjs';
import * as stage from '../bench/sections/stage.mjs';
import * as forward from '../bench/sections/forward.mjs';
import * as fairness from '../bench/sections/fairness.mjs';
import * as container from '../bench/sections/container.mjs';
import * as engineCp from '../bench/sections/engine-cp.mjs';
import * as idle from '../bench/sections/idle.mjs';
import * as ssh from '../bench/sections/ssh.mjs';
import { writeReport } from '../bench/lib/report.mjs';
import { createRequire } from 'node:module';

const SECTIONS = [attach, paste, exportSection, stage, engineCp, forward, fairness, container, idle, ssh];
// The binaries refuse a Node `engines` does not admit (bin/node-version.js): say so once, not in every test.
createRequire(import.meta.url)('../bin/node-version.js')('run-bench');
const root = fileURLToPath(new URL('..', import.meta.url));

const USAGE = `usage: npm run bench [-- OPTIONS]   (or: node scripts/run-bench.mjs [OPTIONS])

Measures jackin against its baselines and writes bench/RESULTS.md (raw numbers: bench/out/results.json).

  --only SECTION[,SECTION]  run only these sections (${SECTIONS.map((s) => s.id).join(', ')})
  --quick                   fewer runs and smaller files: a smoke run, not figures to record
  --out FILE.md             write the report to FILE.md instead of bench/RESULTS.md (raw numbers:
                            FILE.json)
  --no-build                measure the existing dist/ instead of building it first
  --base DIR                the engine-cp section also measures the jackin checkout at DIR (built: \`npm run
                            build\` there), in the same rounds as this one: before and after a change
  --node VERSION            the export and attach sections also run jackin and its capsule under Node VERSION (exact,
                            like 20.20.2; repeatable), and the engine-cp section its capsule, installed by
                            scripts/install-node.sh, in turns with this Node on the same files and baselines
  -h, --help                show this help
`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
      node: { type: 'string', multiple: true, default: [] },
      base: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (e) {
  console.error(`run-bench: ${e.message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
// The raw numbers go to the same name with .json, so the report must be a .md (r.json would get r.json.json).
if (values.out !== undefined && !/\.md$/.test(values.out)) {
  console.error(`run-bench: --out names the markdown report and must end in .md (got ${values.out}); its raw numbers go beside it as .json\n\n${USAGE}`);
  process.exit(2);
}
const only = values.only ? new Set(values.only.split(',')) : null;
const unknown = only ? [...only].filter((id) => !SECTIONS.some((s) => s.id === id)) : [];
if (unknown.length > 0) {
  console.error(`run-bench: unknown section ${unknown.join(', ')}; known: ${SECTIONS.map((s) => s.id).join(', ')}`);
  process.exit(2);
}

// The jackin variant runs the built binaries.
if (!values['no-build']) {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('run-bench: the build failed; fix it or pass --no-build to measure the existing dist/');
    process.exit(build.status ?? 1);
  }
}

// The Nodes of the export, attach and engine-cp sections: this one (which built dist/ and its code caches), then each --node.
const nodes = [{ version: process.versions.node, path: process.execPath }];
for (const version of values.node) {
  const bin = spawnSync(join(root, 'scripts', 'install-node.sh'), [version], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (bin.status !== 0) {
    console.error(`run-bench: could not install Node ${version} (scripts/install-node.sh)`);
    process.exit(2);
  }
  nodes.push({ version, path: join(bin.stdout.trim(), 'node') });
}

const started = new Date();
const log = (msg) => console.error(`[bench ${((Date.now() - started.getTime()) / 1000).toFixed(1)}s] ${msg}`);
const results = [];
for (const section of SECTIONS) {
  if (only && !only.has(section.id)) continue;
  log(`section ${section.id}: ${section.title}`);
  const { data, markdown } = await section.run({ quick: values.quick, log, nodes, base: values.base });
  results.push({ id: section.id, title: section.title, data, markdown });
}

const argv = process.argv.slice(2);
const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
const outFile = values.out ?? join(root, 'bench', 'RESULTS.md');
writeReport(outFile, { command, started, sections: results });
// The raw numbers go next to the report they belong to: a run with --out leaves those of the last full
// run (bench/out/results.json, beside bench/RESULTS.md) as they were.
const rawFile = values.out === undefined ? join(root, 'bench', 'out', 'results.json') : values.out.replace(/\.md$/, '.json');
mkdirSync(dirname(rawFile), { recursive: true });
writeFileSync(
  rawFile,
  `${JSON.stringify({ started: started.toISOString(), command, quick: values.quick, sections: results.map(({ markdown, ...r }) => r) }, null, 2)}\n`,
);
log(`wrote ${outFile} and ${rawFile}`);
// node-pty and child handles may keep the loop alive after every session stopped.
process.exit(0);
