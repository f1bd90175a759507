import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../../../errors.ts';
import { parseNativeOutput, windowsPathToWsl } from './native-contract.ts';
import { interpretNativeOutput, runNativeHelper, MACOS_HELPER, WINDOWS_HELPER } from './native-reader.ts';

const LIMITS = { timeoutMs: 5000, maxBytes: 1024 * 1024 };
const fixture = (name: string): Buffer => readFileSync(new URL(`../../../../test/fixtures/images/${name}`, import.meta.url));

// Outputs recorded from the helpers' contract (macOS 14 osascript, Windows 11 PowerShell 5.1 via WSL 2).
const RECORDED = {
  macImage: '{"kind":"image","format":"png","path":"/var/folders/x/T/jackin-clip-1/clipboard.png","types":["public.png","public.tiff"]}\n',
  macFile: '{"kind":"file","path":"/Users/me/Desktop/Screen Shot.png"}\n',
  macNone: '{"kind":"none"}\n',
  winImage:
    'WARNING: profile skipped\r\n{"types":["PNG","Bitmap"],"kind":"image","format":"png","path":"C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\Temp\\\\jackin-clip-0f.png"}\r\n',
  winError: '{"message":"Requested Clipboard operation did not succeed.","kind":"error"}\r\n',
  winText: '{"kind":"text","text":"C:\\\\Users\\\\me\\\\shot.png"}\r\n',
};

test('native contract: recorded outputs parse into the contract', () => {
  assert.deepEqual(parseNativeOutput('macOS', RECORDED.macImage), {
    kind: 'image',
    format: 'png',
    path: '/var/folders/x/T/jackin-clip-1/clipboard.png',
    types: ['public.png', 'public.tiff'],
  });
  assert.deepEqual(parseNativeOutput('macOS', RECORDED.macFile), { kind: 'file', path: '/Users/me/Desktop/Screen Shot.png' });
  assert.deepEqual(parseNativeOutput('macOS', '{"kind":"file","path":"/Users/me/a.pdf","paths":["/Users/me/a.pdf","/Users/me/b c.csv",7]}\n'), {
    kind: 'file',
    path: '/Users/me/a.pdf',
    paths: ['/Users/me/a.pdf', '/Users/me/b c.csv'],
  });
  assert.deepEqual(parseNativeOutput('macOS', RECORDED.macNone), { kind: 'none' });
  assert.deepEqual(parseNativeOutput('Windows', RECORDED.winImage), {
    kind: 'image',
    format: 'png',
    path: 'C:\\Users\\me\\AppData\\Local\\Temp\\jackin-clip-0f.png',
    types: ['PNG', 'Bitmap'],
  });
  assert.deepEqual(parseNativeOutput('Windows', RECORDED.winError), {
    kind: 'error',
    message: 'Requested Clipboard operation did not succeed.',
  });
  assert.deepEqual(parseNativeOutput('Windows', RECORDED.winText), { kind: 'text', text: 'C:\\Users\\me\\shot.png' });
});

test('native contract: empty, non-JSON, unknown kinds and missing fields are E_CLIPBOARD_READ_FAILED', () => {
  for (const bad of ['', 'oops', '[1]', '{"kind":"picture"}', '{"kind":"image","format":"png"}', '{"kind":"file","path":""}']) {
    assert.throws(
      () => parseNativeOutput('macOS', bad),
      (e) => hasCode(e, 'E_CLIPBOARD_READ_FAILED'),
      bad,
    );
  }
});

test('native contract: Windows drive paths map to /mnt/<drive> under WSL; other forms do not', () => {
  assert.equal(windowsPathToWsl('C:\\Users\\me\\a b.png'), '/mnt/c/Users/me/a b.png');
  assert.equal(windowsPathToWsl('D:/x.png', '/win'), '/win/d/x.png');
  assert.equal(windowsPathToWsl('\\\\server\\share\\x.png'), null);
  assert.equal(windowsPathToWsl('/tmp/x.png'), null);
});

test('native reader: an image output is read from the helper file (capped) and the file is deleted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-native-test-'));
  try {
    const p = join(dir, 'clipboard.png');
    writeFileSync(p, fixture('sample.png'));
    const got = await interpretNativeOutput({ kind: 'image', format: 'png', path: p, types: ['public.png'] }, LIMITS, (x) => x);
    assert.ok(got?.kind === 'image' && got.bytes.equals(fixture('sample.png')));
    assert.equal(existsSync(p), false, 'the helper file is removed after reading');

    writeFileSync(p, fixture('sample.png'));
    await assert.rejects(
      interpretNativeOutput({ kind: 'image', format: 'png', path: p, types: [] }, { timeoutMs: 1000, maxBytes: 10 }, (x) => x),
      (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'),
    );
    assert.equal(existsSync(p), false, 'removed on refusal too');

    assert.equal(await interpretNativeOutput({ kind: 'none' }, LIMITS, (x) => x), null);
    await assert.rejects(
      interpretNativeOutput({ kind: 'error', message: 'denied' }, LIMITS, (x) => x),
      (e) => hasCode(e, 'E_CLIPBOARD_READ_FAILED'),
    );
    assert.deepEqual(await interpretNativeOutput({ kind: 'file', path: 'C:\\a.png' }, LIMITS, windowsPathToWsl), {
      kind: 'file',
      path: '/mnt/c/a.png',
      paths: ['/mnt/c/a.png'],
      offered: [],
    });
    // Several copied files (a Windows file drop list): every one mapped, in order.
    assert.deepEqual(await interpretNativeOutput({ kind: 'file', path: 'C:\\a.pdf', paths: ['C:\\a.pdf', 'D:\\logs\\b.log'] }, LIMITS, windowsPathToWsl), {
      kind: 'file',
      path: '/mnt/c/a.pdf',
      paths: ['/mnt/c/a.pdf', '/mnt/d/logs/b.log'],
      offered: [],
    });
    await assert.rejects(
      interpretNativeOutput({ kind: 'file', path: 'C:\\a.pdf', paths: ['C:\\a.pdf', '\\\\server\\share\\b'] }, LIMITS, windowsPathToWsl),
      (e) => hasCode(e, 'E_CLIPBOARD_READ_FAILED'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('native reader: a stand-in helper process is run and its stdout parsed; a missing one names the fix', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-native-test-'));
  try {
    const standIn = join(dir, 'osascript');
    writeFileSync(standIn, `#!/bin/sh\nprintf '%s\\n' "$*" > "${dir}/argv"\nprintf '{"kind":"none"}\\n'\n`);
    chmodSync(standIn, 0o755);
    const out = await runNativeHelper('macOS', { file: standIn, args: ['-l', 'JavaScript', 'x.js', 'image', '/tmp/d'] }, LIMITS, 'hint', process.env);
    assert.deepEqual(out, { kind: 'none' });
    assert.equal(readFileSync(join(dir, 'argv'), 'utf8'), '-l JavaScript x.js image /tmp/d\n');
    await assert.rejects(
      runNativeHelper('Windows', { file: 'powershell.exe', args: [] }, LIMITS, 'enable WSL interop', { PATH: dir }),
      (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING') && /enable WSL interop/.test((e as Error).message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('native helpers exist in native/ and print through the one JSON contract', () => {
  const mac = readFileSync(MACOS_HELPER, 'utf8');
  const win = readFileSync(WINDOWS_HELPER, 'utf8');
  assert.match(mac, /function run\(argv\)/);
  for (const kind of ['image', 'file', 'none', 'error', 'text']) {
    assert.ok(mac.includes(`kind: '${kind}'`), `macOS helper emits ${kind}`);
    assert.ok(win.includes(`kind = '${kind}'`), `Windows helper emits ${kind}`);
  }
});
