// End-to-end: `jackin run` in tmux, tmux playing the operator's terminal (issue 3 acceptance).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { capsulePid, isAlive, runDir } from './helpers/capsules.ts';
import { JACKIN, OUTER_PROMPT, fixtureCommand, paneFor, startSession, waitForJackinExit } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote } from './helpers/tmux.ts';

test('jackin run: typed commands run in the program and their output appears', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'typing');
  await pane.typeLine('echo "typed-$((6 * 7))"; printf "%s\\n" second-line');
  const screen = await pane.waitForText(/^typed-42$/m);
  assert.match(screen, /^second-line$/m);
  // The prompt came back: bash read the line and is waiting for the next one.
  await pane.waitForScreen('a second inner prompt', (s) => (s.match(/^in\$/gm) ?? []).length >= 2);
});

test('jackin run: stty size inside follows a resize of the operator terminal', async (t) => {
  const pane = await paneFor(t, { rows: 30, cols: 120 });
  await startSession(pane, 'resize');
  await pane.typeLine('stty size');
  await pane.waitForText(/^30 120$/m);
  await pane.resize(40, 100);
  assert.deepEqual(await pane.size(), { rows: 40, cols: 100 });
  // The resize reaches the capsule asynchronously (SIGWINCH → Resize frame → PTY): poll with stty size.
  await pollUntil(
    'stty size inside the session to report 40 100',
    async () => {
      await pane.typeLine('clear; stty size');
      return pane.waitForText(/^40 100$/m, { timeoutMs: 1000 }).then(
        () => true,
        () => false,
      );
    },
    { timeoutMs: 10_000 },
  );
  await pane.resize(20, 70);
  await pollUntil(
    'stty size inside the session to report 20 70',
    async () => {
      await pane.typeLine('clear; stty size');
      return pane.waitForText(/^20 70$/m, { timeoutMs: 1000 }).then(
        () => true,
        () => false,
      );
    },
    { timeoutMs: 10_000 },
  );
});

test('jackin run: a full-screen program draws on the alternate screen and the shell screen returns on exit', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'altscreen');
  await pane.typeLine('echo shell-screen-marker');
  await pane.waitForText(/^shell-screen-marker$/m);
  await pane.typeLine(fixtureCommand('alt-screen.mjs'));
  const full = await pane.waitForText('FULL-SCREEN-READY');
  assert.match(full, /^FULL-SCREEN-TOP$/m);
  const lines = full.split('\n');
  assert.equal(lines[11], `${' '.repeat(29)}drawn at row 12 col 30`, 'text drawn at an absolute position lands there');
  assert.doesNotMatch(full, /shell-screen-marker/, 'the alternate screen hides the shell screen');
  assert.equal((await pane.modes()).alternateOn, true, 'the operator terminal is on its alternate screen');

  await pane.type('q');
  const back = await pane.waitForText(/^shell-screen-marker$/m);
  assert.doesNotMatch(back, /FULL-SCREEN/, 'leaving the alternate screen removes what was drawn there');
  assert.equal((await pane.modes()).alternateOn, false);
  await pane.waitForScreen('the inner prompt after the full-screen program', (s) => (s.match(/^in\$/gm) ?? []).length >= 3);
});

test("jackin run: the program's exit status becomes jackin's and the terminal is left as it was", async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'status');
  await pane.typeLine('echo ran-and-exiting; exit 7');
  assert.equal(await waitForJackinExit(pane), 7);
  assert.match(await pane.capture(), /^ran-and-exiting$/m);

  // A program killed by a signal reports 128 + signal, as a shell would.
  await startSession(pane, 'signalled');
  await pane.typeLine('kill -KILL $$');
  assert.equal(await waitForJackinExit(pane), 137);

  await pane.typeLine('clear; stty -a');
  const stty = await pane.waitForText(/\bicanon\b/);
  assert.match(stty, /(^|\s)echo(\s|$)/m);
  assert.match(stty, /(^|\s)icanon(\s|$)/m);
  // Output post-processing, turned off during the session, is back on.
  assert.match(stty, /(^|\s)opost(\s|$)/m);
});

test('jackin run: output reaches the terminal as the program wrote it (a bare LF moves down, not to column 0)', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'bare-lf');
  // With its own PTY in raw output mode the program's LF is only a line feed; a second pass of output
  // processing on the operator's terminal would have turned it into CR LF.
  await pane.typeLine("clear; stty -opost; printf 'left\\nbelow\\r\\n'; stty opost; echo printed");
  const screen = await pane.waitForText(/^printed$/m);
  assert.match(screen, /^left\n {4}below$/m, screen);
});

// The program exits before the host has attached: its status must still come through.
test('jackin run of a program that exits at once: jackin exits with the program status', async (t) => {
  const pane = await paneFor(t);
  // The outer shell prints jackin's status (waiting on tmux to notice a dead pane was slow to settle on a
  // loaded machine, and this checks jackin, not tmux).
  await pane.typeLine(`clear; ${JACKIN} run --name direct -- bash -c 'exit 7'; echo "jackin-rc=$?"`);
  const status = await waitForJackinExit(pane, 20_000);
  assert.equal(status, 7, `pane screen:\n${await pane.capture()}`);
});

test('SIGKILL of the capsule leaves a sane terminal, a one-line reason on stderr and a non-zero status', async (t) => {
  const pane = await paneFor(t);
  const errFile = join(pane.root, 'jackin-stderr.txt');
  await pane.typeLine(`clear; ${JACKIN} run --name killed -- ${fixtureCommand('sticky-modes.mjs')} 2>${shellQuote(errFile)}; echo "jackin-rc=$?"`);
  await pane.waitForText('STICKY-MODES-SET', { timeoutMs: 20_000 });
  const before = await pane.modes();
  assert.equal(before.alternateOn, true, 'precondition: the program switched the alternate screen on');
  assert.equal(before.cursorVisible, false, 'precondition: the program hid the cursor');

  const pid = await capsulePid(pane.jackinHome, 'killed');
  process.kill(pid, 'SIGKILL');
  await pollUntil(`capsule ${pid} to die`, () => !isAlive(pid));

  const status = await waitForJackinExit(pane);
  assert.notEqual(status, 0, 'a lost session is a failure');
  const stderr = readFileSync(errFile, 'utf8');
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `exactly one line of reason on stderr, got ${JSON.stringify(stderr)}`);
  assert.ok(lines[0]!.length > 10, `the reason says something: ${JSON.stringify(lines[0])}`);
  assert.ok(!/\x1b/.test(stderr), `the reason is plain text: ${JSON.stringify(stderr)}`);

  const after = await pane.modes();
  assert.equal(after.alternateOn, false, 'back on the normal screen');
  assert.equal(after.cursorVisible, true, 'cursor visible again');
  assert.equal(after.keypadCursor, false, 'application cursor keys off');
  assert.equal(after.mouseAny, false, 'mouse reporting off');

  await pane.typeLine('clear; stty -a');
  const stty = await pane.waitForText(/\bicanon\b/);
  assert.match(stty, /(^|\s)echo(\s|$)/m, `echo is on:\n${stty}`);
  assert.match(stty, /(^|\s)icanon(\s|$)/m, `icanon is on:\n${stty}`);
  assert.match(stty, /(^|\s)isig(\s|$)/m, `isig is on:\n${stty}`);
  assert.match(stty, /(^|\s)opost(\s|$)/m, `opost is on:\n${stty}`);
  // And the terminal works: typed text echoes and the shell runs it.
  await pane.typeLine('clear; echo "works-$((1 + 1))"');
  await pane.waitForText(/^works-2$/m);
  await pane.waitForText(OUTER_PROMPT);
});

test('the run directory is 0700 and the socket 0600', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'modes');
  const dir = runDir(pane.jackinHome, 'modes');
  const d = statSync(dir);
  assert.ok(d.isDirectory());
  assert.equal(d.mode & 0o777, 0o700, `mode of ${dir}`);
  const sock = statSync(join(dir, 'jackin.sock'));
  assert.ok(sock.isSocket(), 'jackin.sock is a Unix socket');
  assert.equal(sock.mode & 0o777, 0o600, 'mode of jackin.sock');
  const info = statSync(join(dir, 'capsule.json'));
  assert.equal(info.mode & 0o777, 0o600, 'mode of capsule.json');
  // The capsule runs with the flags docs/guide.md describes (a small young generation, optimizing compiles on
  // the main thread), those its code cache was made with.
  const argv = readFileSync(`/proc/${await capsulePid(pane.jackinHome, 'modes')}/cmdline`, 'utf8').split('\0');
  for (const flag of ['--max-semi-space-size=2', '--no-concurrent-recompilation']) assert.ok(argv.includes(flag), argv.join(' '));
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 10_000), 0);
  await pane.waitForText(OUTER_PROMPT);
});
