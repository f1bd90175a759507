#!/usr/bin/env node
// Runs every test file through tsx's node:test integration.
// Node 20's `--test` finds no .ts files when given a folder or a quoted glob (and still exits 0), so the
// files are listed here explicitly. Usage: node scripts/run-tests.mjs [--unit] [--tmpdir-length N] [name-filter...]
// A name that is the path of an existing file runs that file, wherever it is (test/run-tests.test.ts runs a
// fixture so).
//
// --unit (`npm run test:unit`) runs the unit tests alone, without a build: the test files beside their source
// (src/**/*.test.ts) but for those named *-e2e.test.ts. A unit test starts no tmux, Xvfb, container engine,
// other Node or jackin binary (bin/, which runs the build's bundles); a test file under src/ that does is
// named *-e2e.test.ts, and test/ holds the end-to-end and cross-module tests.
//
// --tmpdir-length N gives the tests a temporary directory whose path is exactly N characters long (at least
// the default's, and at most 80): macOS's TMPDIR (/var/folders/…/T/) is about 50, and nothing a test shows
// or matches may depend on the length (a path that wraps on a pane, a socket path near the kernel's limit).
//
// Tests must clean up after themselves, so the run ends with a check: the tests get a temporary directory
// of their own (TMPDIR) and a marker in their environment (JACKIN_TEST_RUN, passed on by the test helpers
// to the processes they start with a clean environment). Afterwards that directory must be empty and no
// process may carry the marker, run under that directory or name it on its command line. Anything left is
// listed, the run fails, and then the leftovers are removed (processes by pid). A container a test started
// (named jackin-test-*, with a mount from that directory) and still there at the end counts too, and is removed
// by its exact name.
//
// Interrupted (SIGINT, SIGTERM or SIGHUP: Ctrl+C, a CI's time limit), node --test runs no test's after-hooks, and
// the tmux servers, sshd and capsules the tests started run in sessions of their own that no signal to this
// run reaches. So the run stops them itself: the tests, then every process of the run (SIGTERM, then SIGKILL,
// by pid), the run's containers by name, the Docker engine it started; it removes its temporary directory,
// says what it stopped, and exits with 128 + the signal's number.
//
// Test files that run containers on a real Docker engine say `needs-docker-engine` in their text: for
// them the run starts containerd and dockerd (scripts/docker-engine.sh, as root) before the tests, and
// stops them afterwards (runs side by side share them, the last one stops them; an engine started
// elsewhere is left alone), so a run leaves the machine as it found it. While dockerd
// answers, jackin's default engine is docker: every test that wants one engine passes --engine.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { removeContainers, runContainers, runProcesses, stopRunProcesses } from './test-leftovers.mjs';

// The binaries refuse a Node `engines` does not admit (bin/node-version.js): say so once, not in every test.
createRequire(import.meta.url)('../bin/node-version.js')('run-tests');
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
const args = process.argv.slice(2);
const unitAt = args.indexOf('--unit');
const unit = unitAt >= 0;
if (unit) args.splice(unitAt, 1);
let tmpdirLength = null;
const lengthAt = args.indexOf('--tmpdir-length');
if (lengthAt >= 0) {
  tmpdirLength = Number(args[lengthAt + 1]);
  args.splice(lengthAt, 2);
}
// --capsule runtime: every `jackin run --image` the tests start without --capsule lends the capsule runtime
// (JACKIN_CAPSULE) instead of this host's Node, so the container tests run the path a macOS host takes.
let capsule = null;
const capsuleAt = args.indexOf('--capsule');
if (capsuleAt >= 0) {
  capsule = args[capsuleAt + 1];
  args.splice(capsuleAt, 2);
  if (!['host', 'runtime'].includes(capsule)) {
    console.error('run-tests: --capsule takes host or runtime');
    process.exit(2);
  }
}
const filters = args;

/** The signal that interrupted the run, once one did; the tests' process while they run. */
let interrupted = null;
let tests = null;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (interrupted !== null) return;
    interrupted = sig;
    console.error(`\nrun-tests: ${sig}: stopping the tests, then everything they started`);
    tests?.kill('SIGTERM');
  });
}
const interruptedStatus = () => 128 + constants.signals[interrupted];
/** A unit test: beside its source, and not named as one that starts real programs. */
const isUnit = (f) => f.startsWith('src/') && !f.endsWith('-e2e.test.ts');
/** A filter naming a file (relative to the project, or absolute): that file. */
const named = filters.filter((x) => existsSync(resolve(root, x)) && statSync(resolve(root, x)).isFile()).map((x) => relative(root, resolve(root, x)));
const files = [
  ...new Set([
    ...[...walk(join(root, 'src')), ...walk(join(root, 'test'))]
      .filter((f) => !unit || isUnit(f))
      .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))),
    ...named,
  ]),
].sort();
if (files.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
// End-to-end tests run the built binaries (the bundles scripts/bundle.mjs makes from tsc's output), so build
// first; unit tests load the sources through tsx.
if (!unit) {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  // A signal during the build is handled once the event loop runs: let it, before anything starts.
  await sleep(0);
  if (interrupted !== null) process.exit(interruptedStatus());
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** This run as a user of the engine: runs side by side share it, the last one out stops it. */
const DOCKER_USER = { ...process.env, JACKIN_DOCKER_USER: String(process.pid) };
/** Starts the Docker engine when a selected file needs it; true when this run uses one started here (and must say when it is done). */
function startDockerEngine() {
  if (!files.some((f) => readFileSync(join(root, f), 'utf8').includes('needs-docker-engine'))) return false;
  const r = spawnSync(join(root, 'scripts', 'docker-engine.sh'), ['start'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: DOCKER_USER,
  });
  if (r.status !== 0) {
    // Not fatal here: the tests that need the engine fail, each saying so.
    console.error(`run-tests: could not start the Docker engine (scripts/docker-engine.sh start: ${r.error?.message ?? `exit ${r.status}`})`);
    return false;
  }
  // Started by this run, or by another run still using it: this run is one of its users until it stops.
  return ['started', 'shared'].includes(r.stdout.trim());
}
const dockerStarted = startDockerEngine();
function stopDockerEngine() {
  if (!dockerStarted) return;
  const r = spawnSync(join(root, 'scripts', 'docker-engine.sh'), ['stop'], { cwd: root, stdio: 'inherit', env: DOCKER_USER });
  if (r.status !== 0) console.error('run-tests: scripts/docker-engine.sh stop failed');
}

const marker = randomBytes(8).toString('hex');
// A short name by default; with --tmpdir-length, padded to exactly that many characters (mkdtemp adds six).
const shortest = join(tmpdir(), 'jt-').length + 6;
if (tmpdirLength !== null && !(Number.isInteger(tmpdirLength) && tmpdirLength >= shortest && tmpdirLength <= 80)) {
  console.error(`run-tests: --tmpdir-length takes a length from ${shortest} to 80`);
  process.exit(2);
}
const runTmp = mkdtempSync(join(tmpdir(), `jt-${'x'.repeat(tmpdirLength === null ? 0 : tmpdirLength - shortest)}`));
if (tmpdirLength !== null) console.error(`run-tests: TMPDIR is ${runTmp} (${runTmp.length} characters)`);
// Some tools ignore TMPDIR and write to the shared temporary directory (wl-copy builds its buffer path in):
// what appears there under their names, or ours, during the run counts as left behind too.
const SHARED_TMP = tmpdir();
const SHARED_NAMES = /^(wl-copy-buffer-|jackin-)/;
const sharedBefore = new Set(readdirSync(SHARED_TMP));
// Others may pass through (not list): the Wayland tests run the compositor as an unprivileged user, in a
// directory of its own under this one.
chmodSync(runTmp, 0o711);
// Unit test files mostly wait (timers, sockets, a PTY's sh), so four at a time keep two cores busy.
tests = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${unit ? 4 : 2}`, ...files], {
  cwd: root,
  stdio: 'inherit',
  // jackin's cache (the capsule runtimes) is the run's: the one test/helpers/runtime-cache.ts shares, removed
  // with the run's directory, never the operator's.
  env: {
    ...process.env,
    TMPDIR: runTmp,
    JACKIN_TEST_RUN: marker,
    JACKIN_CACHE_DIR: join(runTmp, 'jackin-test-runtime-cache'),
    ...(capsule !== null ? { JACKIN_CAPSULE: capsule } : {}),
  },
});
// A signal that came while the engine started is handled once the event loop runs, below: tests is set by then.
const status = await new Promise((resolve) => {
  tests.on('error', (err) => {
    console.error(`run-tests: could not run the tests: ${err.message}`);
    resolve(1);
  });
  tests.on('exit', (code) => resolve(code ?? 1));
});

function listTree(dir, prefix = '') {
  const out = [];
  let names = [];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const d of names) {
    const p = join(prefix, d.name);
    out.push(d.isDirectory() ? `${p}/` : p);
    if (d.isDirectory() && out.length < 200) out.push(...listTree(join(dir, d.name), p));
  }
  return out;
}

// jackin keeps its ssh control sockets in /tmp/jackin-ssh-<uid> when TMPDIR is long (src/host/instances/ssh.ts), and
// leaves the directory as it would for an operator: the --ssh tests running at once share it, so none removes it.
// Empty, it is the run's to remove; a socket left in it is a leftover.
const sshControlDir = `jackin-ssh-${process.getuid?.() ?? 0}`;
/** What appeared in the shared temporary directory under our names during the run (after removing the ssh
 * control directory, if this run made it and it is empty). */
function sharedLeftovers() {
  if (!sharedBefore.has(sshControlDir)) {
    try {
      rmdirSync(join(SHARED_TMP, sshControlDir));
    } catch {
      // Not made by this run, or not empty (a leftover).
    }
  }
  return readdirSync(SHARED_TMP).filter((e) => SHARED_NAMES.test(e) && !sharedBefore.has(e));
}
/** Removes the run's temporary directory and what it left in the shared one. */
function removeTemporaries(shared) {
  rmSync(runTmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  for (const e of shared) rmSync(join(SHARED_TMP, e), { recursive: true, force: true });
}
const containerLine = (c) => `${c.engine} container ${c.name} (${c.removed ? 'removed' : 'could not be removed'})`;

if (interrupted !== null) {
  const stopped = await stopRunProcesses(marker, runTmp);
  const containers = removeContainers(runContainers(runTmp));
  stopDockerEngine();
  for (const p of stopped) console.error(`run-tests: stopped process ${p.pid}: ${p.cmdline}`);
  for (const c of containers) console.error(`run-tests: ${containerLine(c)}`);
  removeTemporaries(sharedLeftovers());
  process.exit(interruptedStatus());
}

// A process stopped at the end of a test may take a moment to exit, a container a moment to go: give
// leftovers time to go on their own. Containers are looked for while the Docker engine still runs.
let procs = runProcesses(marker, runTmp);
let containers = runContainers(runTmp);
for (const deadline = Date.now() + 10_000; procs.length + containers.length > 0 && Date.now() < deadline; ) {
  await sleep(200);
  procs = runProcesses(marker, runTmp);
  containers = runContainers(runTmp);
}
containers = removeContainers(containers);
stopDockerEngine();
// tsx keeps its compile cache in the temporary directory (`tsx-<uid>`), and on Node 22 and later npm keeps
// Node's (`node-compile-cache`, module.enableCompileCache) there for every npm a test runs: the tools', not a test's.
// The capsule runtime the container tests share (test/helpers/runtime-cache.ts) is the run's, assembled once
// for all its files: it goes with the directory.
const entries = readdirSync(runTmp).filter((e) => !/^(tsx-\d+|node-compile-cache|jackin-test-runtime-cache)$/.test(e));
const shared = sharedLeftovers();
if (procs.length === 0 && containers.length === 0 && entries.length === 0 && shared.length === 0) {
  removeTemporaries([]);
  process.exit(status);
}
console.error(`\nrun-tests: the tests left things behind (temporary directory of this run: ${runTmp})`);
for (const p of procs) console.error(`  process ${p.pid} (cwd ${p.cwd || '?'}): ${p.cmdline}`);
for (const c of containers) console.error(`  ${containerLine(c)}`);
for (const e of entries) {
  const tree = listTree(join(runTmp, e), e);
  console.error(
    `  ${e}${tree.length > 0 ? '/' : ''}${tree.length > 0 ? ` (${tree.length} entries: ${tree.slice(0, 5).join(', ')}${tree.length > 5 ? ', ...' : ''})` : ''}`,
  );
}
for (const e of shared) console.error(`  ${join(SHARED_TMP, e)} (in the shared temporary directory)`);
// Clean up after the report so leftovers do not pile up: the processes by pid (as at an interrupt, so what they
// start meanwhile goes too), then the directories.
await stopRunProcesses(marker, runTmp);
removeTemporaries(shared);
process.exit(status === 0 ? 1 : status);
