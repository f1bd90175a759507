// End-to-end: pasting a screenshot from a real Wayland clipboard (headless sway + wl-copy) into
// `jackin run -- bash` in tmux. Debian packages: sway, wl-clipboard, tmux. Runs as root (creates the
// compositor's user).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './helpers/capsules.ts';
import { paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { startWayland, waylandCopy, type Wayland } from './helpers/wayland.ts';

const PNG = readFileSync(new URL('./fixtures/images/sample.png', import.meta.url));
const JPG = readFileSync(new URL('./fixtures/images/sample.jpg', import.meta.url));
let w: Wayland;

before(async () => {
  w = await startWayland();
});
after(async () => {
  await w.stop();
});

test('wayland: Ctrl+V stages the clipboard image read by wl-paste and types its path, no Enter', async (t) => {
  const pane = await paneFor(t, { env: { WAYLAND_DISPLAY: w.display, XDG_RUNTIME_DIR: w.runtimeDir, JACKIN_PASTE_KEY: 'ctrl+v' } });
  await startSession(pane, 'wl');
  const staging = join(runDir(pane.jackinHome, 'wl'), 'clipboard');
  for (const [type, data, ext] of [
    ['image/png', PNG, 'png'],
    ['image/jpeg', JPG, 'jpg'],
  ] as const) {
    await waylandCopy(w, type, data);
    await pane.sendKeys('C-v');
    const re = new RegExp(`^in\\$ (${staging.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/clip-[0-9a-f-]+\\.${ext})$`, 'm');
    // The path is longer than a row when the temporary directory is long (macOS's TMPDIR): read it joined.
    const screen = await pane.waitForText(re, { timeoutMs: 30_000, joined: true });
    const path = re.exec(screen)![1]!;
    assert.deepEqual(readFileSync(path), data, 'byte-identical');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    await pane.sendKeys('C-u');
    await pollUntil('an empty command line', async () => /^in\$$/m.test(await pane.capture()));
  }
});
