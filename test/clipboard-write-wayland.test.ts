// Copy offers on a real Wayland clipboard: headless sway + wl-copy (Debian: sway, wl-clipboard; as root).
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { createTextWriter } from '../src/host/platform/clipboard/write-text.ts';
import { pollUntil } from './helpers/poll.ts';
import { startWayland } from './helpers/wayland.ts';

test('clipboard text writer: wl-copy puts exactly the text on a real Wayland clipboard', async (t) => {
  const w = await startWayland();
  t.after(() => w.stop());
  const env = { ...process.env, WAYLAND_DISPLAY: w.display, XDG_RUNTIME_DIR: w.runtimeDir };
  const text = 'copied \u00e9\u4e2d\n\tline two\r\n';
  await createTextWriter({ kind: 'wl-paste' }, 'test', env, () => {
    throw new Error('no terminal write expected');
  }).write(text);
  const read = () => spawnSync('wl-paste', ['--no-newline', '--type', 'text/plain;charset=utf-8'], { env }).stdout.toString('utf8');
  await pollUntil('the Wayland clipboard to hold the text', () => read() === text);
});
