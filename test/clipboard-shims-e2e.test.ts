// The container's clipboard tools under `jackin run --image` (Podman, an image with no jackin, no X server
// and no clipboard tool of its own): `xclip` in the container makes a copy offer the operator copies to the
// host's real X11 clipboard (Xvfb + xclip) with the palette; after a Ctrl+V image paste, reading the
// clipboard as image/png in the container yields the pasted bytes; a read of text, with no bracketed text paste in
// the session, answers nothing as an empty clipboard does; an unknown option is a usage error. One container for every check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INNER_PROMPT, INNER_SHELL, JACKIN, paneFor, waitForJackinExit } from './helpers/jackin-cli.ts';
import { containerName, glibcTestImage, removeContainer } from './helpers/podman-image.mjs';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote } from './helpers/tmux.ts';
import { ownClipboard, startXvfb } from './helpers/xvfb.ts';
import { bigPng } from './helpers/png.mjs';
import { onlyStagedImage } from './helpers/capsules.ts';

const CONTAINER_START_MS = 60_000;
const PALETTE_KEY = [0x1c];

test("podman: run --image: xclip copies become copy offers, the pasted image is the clipboard's image/png, text reads answer nothing", {
  timeout: 240_000,
}, async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const pane = await paneFor(t, { rows: 30, cols: 140, env: { DISPLAY: x.display, JACKIN_PASTE_KEY: 'ctrl+v' } });
  const name = containerName('podman-clipboard-shims');
  t.after(() => removeContainer(name, 'podman'));
  const ws = mkdtempSync(join(tmpdir(), 'jackin-clip-ws-'));
  chmodSync(ws, 0o777);
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  const image = await glibcTestImage('podman');
  await pane.typeLine(
    `clear; ${JACKIN} run --image ${image.ref} --engine podman --name ${name} --workspace ${shellQuote(ws)} -- ${INNER_SHELL}; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });

  // Nothing pasted yet: the tools answer as an empty clipboard does.
  await pane.typeLine('xclip -selection clipboard -t TARGETS -o; echo "targets-rc=$?"; wl-paste; echo "wl-rc=$?"; pbpaste; echo "pb-rc=$?"');
  await pane.waitForText(/^pb-rc=0$/m, { timeoutMs: 30_000 });
  const empty = await pane.waitForText(/^wl-rc=1$/m);
  assert.match(empty, /^Error: target TARGETS not available\ntargets-rc=1$/m);
  assert.match(empty, /^Nothing is copied\nwl-rc=1$/m);

  // A write is a copy offer; the palette's `c` puts it on the host's clipboard.
  await pane.typeLine('printf "hi from the container" | xclip -selection clipboard; echo "copy-rc=$?"');
  await pane.waitForText(/^copy-rc=0$/m, { timeoutMs: 30_000 });
  await pane.sendBytes([...PALETTE_KEY, 0x63]);
  const hostText = () => spawnSync('xclip', ['-selection', 'clipboard', '-o'], { env: x.env }).stdout.toString('utf8');
  await pollUntil('the host clipboard to hold the text xclip copied in the container', () => hostText() === 'hi from the container', {
    timeoutMs: 15_000,
    last: hostText,
  });

  // Ctrl+V pastes an image (the host's X11 clipboard holds a PNG; owning it also ends the xclip that served the copy).
  const png = bigPng(300_000);
  const owner = await ownClipboard(x, 'image/png', png);
  try {
    await pane.sendKeys('C-v');
    await pane.waitForText(await onlyStagedImage(pane.jackinHome, name), { timeoutMs: 30_000 });
  } finally {
    await owner.stop();
  }
  await pane.sendKeys('C-u');

  // The agent reads the clipboard itself: the image is there, as image/png, byte for byte.
  await pane.typeLine(
    'xclip -selection clipboard -t TARGETS -o; wl-paste --list-types; xclip -selection clipboard -o -t image/png > out.png; echo "img-rc=$?"; wl-paste --type image/png > out2.png; echo "wl-img-rc=$?"',
  );
  const listed = await pane.waitForText(/^wl-img-rc=0$/m, { timeoutMs: 30_000 });
  assert.match(listed, /^TARGETS\nimage\/png\nimage\/png\nimg-rc=0$/m);
  assert.deepEqual(readFileSync(join(ws, 'out.png')), png, 'xclip -o -t image/png gives the pasted bytes');
  assert.deepEqual(readFileSync(join(ws, 'out2.png')), png, 'wl-paste --type image/png gives the pasted bytes');

  // Text reads answer nothing: this session had no bracketed text paste (the capsule keeps only those). An unknown option is a usage error.
  await pane.typeLine('xclip -selection clipboard -o; echo "text-rc=$?"; xsel -b -o; echo "xsel-rc=$?"; xclip -bogus; echo "bad-rc=$?"');
  const text = await pane.waitForText(/^bad-rc=\d+$/m, { timeoutMs: 30_000 });
  assert.match(text, /^Error: target UTF8_STRING not available\ntext-rc=1$/m);
  assert.match(text, /^xsel-rc=0$/m);
  assert.match(text, /E_USAGE/);
  assert.match(text, /^bad-rc=2$/m);

  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 30_000), 0);
});
