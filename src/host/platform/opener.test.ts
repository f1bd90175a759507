import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode, JackinError, type ErrorCode } from '../../errors.ts';
import { createOpener, openerArgv, splitCommandLine } from './opener.ts';
import { createRateLimiter } from './rate-limiter.ts';

/**
 * A recorder opener: writes its argv (NUL-separated) and JACKIN_OPEN_ACTION to files, then exits with
 * RECORDER_STATUS (default 0). A directory name with a space proves JACKIN_OPENER is split shell-like.
 */
function makeRecorder(prefix = 'jackin opener '): { dir: string; script: string; argvFile: string; actionFile: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const script = join(dir, 'record.sh');
  const argvFile = join(dir, 'argv');
  const actionFile = join(dir, 'action');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `printf '%s\\0' "$@" > '${argvFile}'`,
      `printf '%s' "$JACKIN_OPEN_ACTION" > '${actionFile}'`,
      'if [ -n "$RECORDER_STDERR" ]; then echo "$RECORDER_STDERR" >&2; fi',
      'exit "${RECORDER_STATUS:-0}"',
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return { dir, script, argvFile, actionFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function readArgv(file: string): string[] {
  const raw = readFileSync(file, 'utf8');
  return raw.split('\0').slice(0, -1);
}

const quote = (s: string): string => `'${s.replace(/'/gu, `'\\''`)}'`;

async function rejectsWithCode(p: Promise<unknown>, code: ErrorCode): Promise<JackinError> {
  try {
    await p;
  } catch (e) {
    assert.ok(hasCode(e, code), `expected ${code}, got ${e instanceof JackinError ? e.code : String(e)}`);
    return e as JackinError;
  }
  assert.fail(`expected rejection with ${code}`);
}

test('splitCommandLine splits like a shell without expanding anything', () => {
  assert.deepEqual(splitCommandLine('open'), ['open']);
  assert.deepEqual(splitCommandLine('  \'/a b/c\' --x="1 2" \\$HOME "q\\"\\\\"  '), ['/a b/c', '--x=1 2', '$HOME', 'q"\\']);
  assert.deepEqual(splitCommandLine('a\'\'b "" c'), ['ab', '', 'c']);
  assert.deepEqual(splitCommandLine('$(rm -rf /) `id` ; x'), ['$(rm', '-rf', '/)', '`id`', ';', 'x']);
  for (const bad of ["'open", '"open', 'open\\']) {
    assert.throws(
      () => splitCommandLine(bad),
      (e: unknown) => hasCode(e, 'E_OPENER_CONFIG'),
    );
  }
  assert.equal(openerArgv({}, 'x'), null);
  assert.equal(openerArgv({ JACKIN_OPENER: '   ' }, 'x'), null);
  assert.deepEqual(openerArgv({ JACKIN_OPENER: 'rec --new-tab' }, 'https://e.com/'), ['rec', '--new-tab', 'https://e.com/']);
});

test('openUrl runs JACKIN_OPENER with exactly its words plus the normalised href', async () => {
  const r = makeRecorder();
  try {
    const opener = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: `${quote(r.script)} --new-tab` } });
    const result = await opener.openUrl('HTTPS://Example.com/a_(b)');
    assert.deepEqual(result, { command: r.script, state: 'exited' });
    assert.deepEqual(readArgv(r.argvFile), ['--new-tab', 'https://example.com/a_(b)']);
    assert.equal(readFileSync(r.actionFile, 'utf8'), 'url');
  } finally {
    r.cleanup();
  }
});

test('openUrl passes shell metacharacters through as data, never to a shell', async () => {
  const r = makeRecorder();
  try {
    const opener = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script) } });
    const url = "https://example.com/$(touch${IFS}pwned)`id`;'x'&y=|z";
    await opener.openUrl(url);
    assert.deepEqual(readArgv(r.argvFile), [new URL(url).href]);
    assert.equal(existsSync('pwned'), false);
  } finally {
    r.cleanup();
  }
});

test('openUrl refuses every unsafe link before running anything', async () => {
  const r = makeRecorder();
  try {
    const env = { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script) };
    const opener = createOpener({ env, limiter: createRateLimiter({ max: 100, windowMs: 1000 }) });
    const cases: [string, ErrorCode][] = [
      ['javascript:alert(1)', 'E_URL_SCHEME'],
      ['file:///etc/passwd', 'E_URL_SCHEME'],
      ['data:text/html,x', 'E_URL_SCHEME'],
      ['vbscript:x', 'E_URL_SCHEME'],
      ['myapp://x', 'E_URL_SCHEME'],
      ['--help', 'E_URL_INVALID'],
      ['-https://example.com', 'E_URL_INVALID'],
      ['https://user:pw@example.com/', 'E_URL_CREDENTIALS'],
      ['https://example.com/\u001b]52;c;x\u0007', 'E_URL_CONTROL'],
      ['https://example.com/\u202egpj.exe', 'E_URL_CONTROL'],
      [`https://example.com/${'a'.repeat(9000)}`, 'E_URL_TOO_LONG'],
    ];
    for (const [url, code] of cases) {
      const e = await rejectsWithCode(opener.openUrl(url), code);
      assert.ok(!e.message.includes('pw@'));
    }
    // A forged "checked" object is checked again.
    await rejectsWithCode(opener.openUrl({ ok: true, href: 'javascript:alert(1)', display: 'x' }), 'E_URL_SCHEME');
    const denied = createOpener({ env: { ...env, JACKIN_OPEN_LINKS: 'Deny' } });
    await rejectsWithCode(denied.openUrl('https://example.com/'), 'E_LINKS_DISABLED');
    assert.equal(existsSync(r.argvFile), false, 'the opener must not have run');
  } finally {
    r.cleanup();
  }
});

test('openUrl reports a failing opener with its command and exit status', async () => {
  const r = makeRecorder();
  try {
    const opener = createOpener({
      env: { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script), RECORDER_STATUS: '7', RECORDER_STDERR: 'no browser found' },
    });
    const e = await rejectsWithCode(opener.openUrl('https://example.com/'), 'E_OPENER_FAILED');
    assert.match(e.message, /record\.sh/u);
    assert.match(e.message, /status 7/u);
    assert.match(e.message, /no browser found/u);
    const missing = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: '/nonexistent/opener --x' } });
    const e2 = await rejectsWithCode(missing.openUrl('https://example.com/'), 'E_OPENER_FAILED');
    assert.match(e2.message, /\/nonexistent\/opener/u);
  } finally {
    r.cleanup();
  }
});

test('an opener still running after the settle time counts as launched, one that fails at once does not', async () => {
  // A launcher that keeps the browser in the foreground never exits; it must not hang the open.
  const longRunner = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: "sh -c 'sleep 3' sh" }, settleMs: 200 });
  assert.deepEqual(await longRunner.openUrl('https://example.com/'), { command: 'sh', state: 'running' });
  // `sleep <url>` exits at once with an error, well inside the settle time.
  const failing = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: 'sleep' }, settleMs: 5000 });
  await rejectsWithCode(failing.openUrl('https://example.com/'), 'E_OPENER_FAILED');
});

test('openUrl is rate limited', async () => {
  const r = makeRecorder();
  try {
    let now = 0;
    const limiter = createRateLimiter({ max: 3, windowMs: 5000, now: () => now });
    const opener = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script) }, limiter });
    for (let i = 0; i < 3; i++) await opener.openUrl(`https://example.com/${i}`);
    rmSync(r.argvFile);
    await rejectsWithCode(opener.openUrl('https://example.com/3'), 'E_RATE_LIMITED');
    assert.equal(existsSync(r.argvFile), false);
    now = 5000;
    await opener.openUrl('https://example.com/4');
    assert.deepEqual(readArgv(r.argvFile), ['https://example.com/4']);
  } finally {
    r.cleanup();
  }
});

test('openFile opens a file and reveals its folder through JACKIN_OPENER', async () => {
  const r = makeRecorder();
  try {
    const opener = createOpener({ env: { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script) }, platform: 'linux' });
    const file = join(r.dir, '-report.txt');
    writeFileSync(file, 'a report\n');
    assert.equal((await opener.openFile(file, 'open')).revealedInstead, undefined);
    assert.deepEqual(readArgv(r.argvFile), [file]);
    assert.equal(readFileSync(r.actionFile, 'utf8'), 'open');
    await opener.openFile(file, 'reveal');
    assert.deepEqual(readArgv(r.argvFile), [r.dir]);
    assert.equal(readFileSync(r.actionFile, 'utf8'), 'reveal');
    await assert.rejects(opener.openFile('relative/x.txt', 'open'), TypeError);
  } finally {
    r.cleanup();
  }
});

test('openFile reveals instead of opening a file that would run something, by name or by content', async () => {
  const r = makeRecorder();
  try {
    const opener = createOpener({
      env: { PATH: process.env['PATH'], JACKIN_OPENER: quote(r.script) },
      platform: 'linux',
      limiter: createRateLimiter({ max: 100, windowMs: 1000 }),
    });
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ['x-1.desktop', '[Desktop Entry]\nExec=sh -c id\n', /\.desktop/u],
      ['invoicetxt-1.EXE', 'MZ', /\.exe/u],
      ['run.sh. ', '#!/bin/sh\n', /\.sh/u],
      ['Report.webloc', 'x', /\.webloc/u],
      ['notes', '[Desktop Entry]\nExec=id\n', /desktop launcher/u],
      ['tool', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), /Linux program/u],
      ['readme', '#!/usr/bin/env python3\n', /script/u],
    ];
    for (const [name, content, why] of cases) {
      const file = join(r.dir, name);
      writeFileSync(file, content);
      const res = await opener.openFile(file, 'open');
      assert.match(res.revealedInstead ?? '', why, name);
      assert.equal(readFileSync(r.actionFile, 'utf8'), 'reveal', name);
      assert.deepEqual(readArgv(r.argvFile), [r.dir], name);
    }
    // A missing file is never opened either.
    const gone = await opener.openFile(join(r.dir, 'gone.txt'), 'open');
    assert.match(gone.revealedInstead ?? '', /could not be read/u);
    const ok = join(r.dir, 'photo.png');
    writeFileSync(ok, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    assert.equal((await opener.openFile(ok, 'open')).revealedInstead, undefined);
    assert.equal(readFileSync(r.actionFile, 'utf8'), 'open');
    assert.deepEqual(readArgv(r.argvFile), [ok]);
  } finally {
    r.cleanup();
  }
});

test('without JACKIN_OPENER the open package runs xdg-open and reports its failure', async () => {
  // The xdg-open that `open` ships hands URLs to $BROWSER when no desktop is detected (and splits
  // $BROWSER on spaces, hence a recorder path without one).
  const r = makeRecorder('jackin-opener-');
  const saved = { ...process.env };
  try {
    delete process.env['DISPLAY'];
    delete process.env['WAYLAND_DISPLAY'];
    delete process.env['XDG_CURRENT_DESKTOP'];
    delete process.env['DESKTOP_SESSION'];
    process.env['BROWSER'] = r.script;
    const opener = createOpener({ env: {}, platform: 'linux' });
    assert.deepEqual(await opener.openUrl('https://example.com/x?y=1'), { command: 'xdg-open', state: 'exited' });
    assert.deepEqual(readArgv(r.argvFile), ['https://example.com/x?y=1']);
    process.env['BROWSER'] = 'false';
    const e = await rejectsWithCode(createOpener({ env: {}, platform: 'linux' }).openUrl('https://example.com/'), 'E_OPENER_FAILED');
    assert.match(e.message, /xdg-open exited with status \d+/u);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    r.cleanup();
  }
});
