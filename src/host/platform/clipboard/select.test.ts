import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hasCode } from '../../../errors.ts';
import { chooseBackend, createReader } from './select.ts';

const pick = (env: NodeJS.ProcessEnv, platform: NodeJS.Platform = 'linux', wsl = false) => chooseBackend({ env, platform, wsl }).choice;

test('select: JACKIN_CLIPBOARD forces a backend, whatever the platform', () => {
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'xclip', WAYLAND_DISPLAY: 'w' }), { kind: 'xclip' });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'wl-paste' }, 'darwin'), { kind: 'wl-paste' });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'macos' }), { kind: 'macos' });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'windows' }), { kind: 'windows', wsl: true });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'windows' }, 'win32'), { kind: 'windows', wsl: false });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'none', DISPLAY: ':0' }), { kind: 'none' });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: 'terminal', DISPLAY: ':0' }), { kind: 'terminal' });
  assert.deepEqual(pick({ JACKIN_CLIPBOARD: `command:my-clip --type 'image/png' a\\ b` }), {
    kind: 'command',
    argv: ['my-clip', '--type', 'image/png', 'a b'],
  });
});

test('select: an unknown or empty forced backend is E_BAD_CLIPBOARD_BACKEND', () => {
  assert.throws(
    () => pick({ JACKIN_CLIPBOARD: 'xsel' }),
    (e) => hasCode(e, 'E_BAD_CLIPBOARD_BACKEND'),
  );
  assert.throws(
    () => pick({ JACKIN_CLIPBOARD: 'command:  ' }),
    (e) => hasCode(e, 'E_BAD_CLIPBOARD_BACKEND'),
  );
  assert.throws(
    () => pick({ JACKIN_CLIPBOARD: "command:a 'b" }),
    (e) => hasCode(e, 'E_BAD_QUOTING'),
  );
});

test('select: WAYLAND_DISPLAY, then DISPLAY, then macOS, then Windows/WSL', () => {
  assert.deepEqual(pick({ WAYLAND_DISPLAY: 'wayland-0', DISPLAY: ':0' }), { kind: 'wl-paste' });
  assert.deepEqual(pick({ DISPLAY: ':0' }), { kind: 'xclip' });
  assert.deepEqual(pick({}, 'darwin'), { kind: 'macos' });
  assert.deepEqual(pick({}, 'win32'), { kind: 'windows', wsl: false });
  assert.deepEqual(pick({}, 'linux', true), { kind: 'windows', wsl: true });
  assert.deepEqual(pick({}, 'linux'), { kind: 'unavailable' });
});

test('select: with no clipboard in a session over SSH, the operator terminal is the clipboard; a display still wins', () => {
  assert.deepEqual(chooseBackend({ env: { SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22' }, platform: 'linux', wsl: false }), {
    choice: { kind: 'terminal' },
    reason: 'no local clipboard and the session is remote (SSH_CONNECTION is set)',
  });
  assert.deepEqual(pick({ SSH_TTY: '/dev/pts/3' }), { kind: 'terminal' });
  assert.deepEqual(pick({ SSH_CONNECTION: 'x', DISPLAY: 'localhost:10.0' }), { kind: 'xclip' });
  assert.deepEqual(pick({ SSH_CONNECTION: 'x' }, 'darwin'), { kind: 'macos' });
  // Without a terminal to ask (no writer given), the terminal backend is no clipboard.
  assert.equal(createReader({ kind: 'terminal' }, 'JACKIN_CLIPBOARD=terminal', {}).name, 'unavailable');
  assert.equal(createReader({ kind: 'terminal' }, 'JACKIN_CLIPBOARD=terminal', {}, undefined, { write: () => {} }).name, 'terminal');
});

test('select: no clipboard at all is E_CLIPBOARD_BACKEND_MISSING on read; none reads nothing', async () => {
  const r = createReader({ kind: 'unavailable' }, 'neither WAYLAND_DISPLAY nor DISPLAY is set', {});
  await assert.rejects(r.readImage(), (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING') && /JACKIN_CLIPBOARD=command/.test((e as Error).message));
  assert.equal(await createReader({ kind: 'none' }, 'off', {}).readImage(), null);
});

test('command reader: runs the argv without a shell and returns its stdout bytes; empty stdout is no image', async () => {
  const png = new URL('../../../../test/fixtures/images/sample.png', import.meta.url).pathname;
  const r = createReader({ kind: 'command', argv: ['cat', png] }, 'test', process.env);
  const got = await r.readImage();
  assert.ok(got?.kind === 'image' && got.bytes.equals(readFileSync(png)));
  assert.equal(await createReader({ kind: 'command', argv: ['true'] }, 'test', process.env).readImage(), null);
  await assert.rejects(
    createReader({ kind: 'command', argv: ['sh', '-c', 'echo broken >&2; exit 3'] }, 'test', process.env).readImage(),
    (e) => hasCode(e, 'E_CLIPBOARD_READ_FAILED') && /exit 3/.test((e as Error).message) && /broken/.test((e as Error).message),
  );
  await assert.rejects(createReader({ kind: 'command', argv: ['sleep', '5'] }, 'test', process.env, { timeoutMs: 100, maxBytes: 10 }).readImage(), (e) =>
    hasCode(e, 'E_CLIPBOARD_TIMEOUT'),
  );
  await assert.rejects(createReader({ kind: 'command', argv: ['cat', png] }, 'test', process.env, { timeoutMs: 5000, maxBytes: 10 }).readImage(), (e) =>
    hasCode(e, 'E_IMAGE_TOO_LARGE'),
  );
});
