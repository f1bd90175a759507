// The tmux driver on its own, without jackin: the controls for the attach e2e tests. If one of these fails,
// an attach e2e failure says nothing about jackin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureCommand, OUTER_PROMPT, paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote } from './helpers/tmux.ts';

test('tmux driver: the pane has the clean environment and the requested size', async (t) => {
  const pane = await paneFor(t, { rows: 24, cols: 90 });
  await pane.typeLine('printf "%s\\n" "home=$HOME" "jh=$JACKIN_HOME" "term=$TERM" "tmux=${TMUX:-none}"; stty size');
  // Joined: under a long TMPDIR the paths wrap at 90 columns.
  const screen = await pane.waitForText(/^24 90$/m, { joined: true });
  for (const line of [`home=${pane.home}`, `jh=${pane.jackinHome}`, 'term=xterm-256color', 'tmux=none']) {
    assert.ok(screen.split('\n').includes(line), `${line} in\n${screen}`);
  }
});

test('tmux driver: sendBytes delivers all 256 byte values to a raw-mode program', async (t) => {
  const pane = await paneFor(t);
  const out = join(pane.root, 'received.bin');
  await pane.typeLine(fixtureCommand('raw-recorder.mjs', out));
  await pane.waitForText('RAW-RECORDER-READY');
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  await pane.sendBytes(all);
  await pollUntil('256 bytes recorded', () => readFileSync(out).length >= 256);
  assert.ok(readFileSync(out).equals(all));
});

test('tmux driver: startSession refuses a ready marker that its own command line shows, and types nothing', async (t) => {
  const pane = await paneFor(t, { rows: 40, cols: 120 });
  // The echo of this line shows HOSTILE-READY before jackin runs: a key sent on seeing it reaches the
  // shell (Ctrl+\ is a SIGQUIT there), not jackin. Built at run time, the marker is the program's alone.
  const fixed = `sh -c ${shellQuote("printf 'HOSTILE-READY'; exec cat")}`;
  await assert.rejects(startSession(pane, 'marker', 'HOSTILE-READY', fixed), /ready marker HOSTILE-READY is in the command line/);
  await assert.rejects(startSession(pane, 'marker', /HOSTILE-\w+/, fixed), /is in the command line/);
  assert.ok(OUTER_PROMPT.test(await pane.capture()), 'nothing was typed');
  const built = `sh -c ${shellQuote("printf 'HOSTILE-%s' READY; exec cat")}`;
  const screen = await startSession(pane, 'marker', /^HOSTILE-READY$/m, built);
  assert.ok(!screen.includes('jackin.js'), `the marker was found on the program's screen, not the command line:\n${screen}`);
});

test('tmux driver: modes() sees the alternate screen and hidden cursor a program switched on', async (t) => {
  const pane = await paneFor(t);
  assert.equal((await pane.modes()).alternateOn, false);
  await pane.typeLine(fixtureCommand('sticky-modes.mjs'));
  await pane.waitForText('STICKY-MODES-SET');
  const m = await pane.modes();
  assert.equal(m.alternateOn, true);
  assert.equal(m.cursorVisible, false);
  assert.equal(m.keypadCursor, true);
  assert.equal(m.mouseAny, true);
});

test('tmux driver: pasteFile delivers a file exactly, resize changes the size, the shell reports a command status', async (t) => {
  const pane = await paneFor(t);
  const src = join(pane.root, 'src.txt');
  const dst = join(pane.root, 'dst.txt');
  const text = Array.from({ length: 2000 }, (_, i) => `paste line ${i}\n`).join('');
  writeFileSync(src, text);
  await pane.typeLine(`stty -echo; cat > ${shellQuote(dst)}; stty echo; echo pasted`);
  await pollUntil('cat to create its file', () => {
    try {
      return statSync(dst).isFile();
    } catch {
      return false;
    }
  });
  await pane.pasteFile(src);
  await pane.sendBytes([0x04]);
  await pane.waitForText(/^pasted$/m);
  assert.equal(readFileSync(dst, 'utf8'), text);

  await pane.resize(40, 100);
  assert.deepEqual(await pane.size(), { rows: 40, cols: 100 });
  await pane.typeLine('clear; stty size');
  await pane.waitForText(/^40 100$/m);

  // A command's status as the e2e tests read jackin's: printed by the pane's shell. (Reading it from tmux
  // as a dead pane's status is not used by any test: tmux 3.3 here sometimes never reported a pane dead
  // after its process and terminal were gone.)
  await pane.typeLine(`bash -c 'exit 7'; echo "rc=$?"`);
  await pane.waitForText(/^rc=7$/m);
});
