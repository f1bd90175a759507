import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_BIN, CLIPBOARD_BIN, programEnv } from './serve.ts';

test('programEnv: the clipboard shims come first on PATH only with --clipboard; a local program keeps its own tools', () => {
  const env = { PATH: '/usr/bin:/bin', HOME: '/h' };
  assert.deepEqual(programEnv(env, '/run', false), { PATH: '/usr/bin:/bin', HOME: '/h', JACKIN_RUN_DIR: '/run' });
  assert.equal(programEnv(env, '/run', false, true)['PATH'], `${CLIPBOARD_BIN}:/usr/bin:/bin`);
  assert.equal(programEnv(env, '/run', true, true)['PATH'], `${CLIPBOARD_BIN}:${BROWSER_BIN}:/usr/bin:/bin`);
  assert.equal(programEnv({}, '/run', false, true)['PATH'], `${CLIPBOARD_BIN}:/usr/local/bin:/usr/bin:/bin`);
  assert.equal(programEnv(env, '/run', false, true)['BROWSER'], undefined);
  for (const tool of ['xclip', 'xsel', 'wl-copy', 'wl-paste', 'pbcopy', 'pbpaste']) {
    const shim = join(CLIPBOARD_BIN, tool);
    assert.ok(existsSync(shim) && (statSync(shim).mode & 0o111) !== 0, `${tool} is an executable shim`);
  }
});
