import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { confirmedRealPath, openExact, resolveHostPath, sameFileSpelledOtherwise } from './host-file.ts';
import { testDir } from '../../../test/helpers/test-run.ts';

function tempDir(t: { after: (fn: () => void) => void }): string {
  return testDir(t, 'jackin-host-file-');
}

const code = (c: string) => (e: unknown) => e instanceof JackinError && e.code === c;

test('resolveHostPath: a plain file is not redirected; a symlink in a directory (a shared workspace) is, to its target', async (t) => {
  const dir = tempDir(t);
  const private_ = join(dir, 'private');
  mkdirSync(private_);
  writeFileSync(join(private_, 'passport.png'), 'secret');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'plain.png'), 'plain');
  symlinkSync(join(private_, 'passport.png'), join(workspace, 'shot.png'));
  mkdirSync(join(workspace, 'sub'));
  symlinkSync(private_, join(workspace, 'sub', 'dir'));

  assert.deepEqual(await resolveHostPath(join(workspace, 'plain.png')), { real: join(workspace, 'plain.png'), redirected: false });
  assert.deepEqual(await resolveHostPath(join(workspace, 'shot.png')), { real: join(private_, 'passport.png'), redirected: true });
  // A symlinked directory on the way counts as much as a symlinked file.
  assert.deepEqual(await resolveHostPath(join(workspace, 'sub', 'dir', 'passport.png')), { real: join(private_, 'passport.png'), redirected: true });
  await assert.rejects(resolveHostPath(join(workspace, 'missing.png')), code('E_PATH_NOT_FOUND'));
});

test('resolveHostPath: a symlink to a name that differs only in letter case is a redirect (a case-sensitive volume holds both)', async (t) => {
  // On a case-insensitive file system realpath may spell a name as stored, which is not a redirect; a
  // symlink whose target differs only in case is one, as here, where the two names are two files.
  const dir = tempDir(t);
  writeFileSync(join(dir, 'SHOT.png'), "the operator's other file");
  symlinkSync(join(dir, 'SHOT.png'), join(dir, 'shot.png'));
  assert.deepEqual(await resolveHostPath(join(dir, 'shot.png')), { real: join(dir, 'SHOT.png'), redirected: true });
  // A directory on the way counts the same.
  mkdirSync(join(dir, 'Private'));
  writeFileSync(join(dir, 'Private', 'a.png'), 'x');
  symlinkSync(join(dir, 'Private'), join(dir, 'private'));
  assert.deepEqual(await resolveHostPath(join(dir, 'private', 'a.png')), { real: join(dir, 'Private', 'a.png'), redirected: true });
  // The check itself, which on this (case-sensitive) file system sees each way a case-only difference is
  // not the same file: a symlink on the way, or two files.
  assert.equal(await sameFileSpelledOtherwise(join(dir, 'shot.png'), join(dir, 'SHOT.png')), false);
  assert.equal(await sameFileSpelledOtherwise(join(dir, 'private', 'a.png'), join(dir, 'Private', 'a.png')), false);
  writeFileSync(join(dir, 'b.png'), 'one');
  writeFileSync(join(dir, 'B.png'), 'two');
  assert.equal(await sameFileSpelledOtherwise(join(dir, 'b.png'), join(dir, 'B.png')), false);
  assert.equal(await sameFileSpelledOtherwise(join(dir, 'b.png'), join(dir, 'b.png')), true);
  assert.equal(await sameFileSpelledOtherwise(join(dir, 'b.png'), join(dir, 'SHOT.png')), false, 'not a case-only difference');
});

test('resolveHostPath: a symlink in the root directory (a system alias such as /bin -> usr/bin) does not count', async () => {
  // Debian's merged /usr makes /bin, /lib and /sbin such aliases (macOS: /var, /tmp, /etc).
  const aliases = readdirSync('/').filter((n) => lstatSync(`/${n}`).isSymbolicLink());
  assert.ok(aliases.includes('bin'), `this test needs a root-directory symlink such as /bin; found ${JSON.stringify(aliases)}`);
  const regular = readdirSync('/bin').find((n) => !lstatSync(`/bin/${n}`).isSymbolicLink() && lstatSync(`/bin/${n}`).isFile());
  assert.ok(regular !== undefined);
  const r = await resolveHostPath(`/bin/${regular}`);
  assert.equal(r.real, realpathSync(`/bin/${regular}`));
  assert.notEqual(r.real, `/bin/${regular}`);
  assert.equal(r.redirected, false);
});

test('confirmedRealPath: asks only for a redirected path, names both paths, and a no reads nothing', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'target.png'), 'x');
  symlinkSync(join(dir, 'target.png'), join(dir, 'link.png'));
  const asked: Array<[string, string]> = [];
  const answer = (yes: boolean) => async (given: string, real: string) => (asked.push([given, real]), yes);

  assert.equal(await confirmedRealPath(join(dir, 'target.png'), answer(false)), join(dir, 'target.png'));
  assert.deepEqual(asked, []);
  assert.equal(await confirmedRealPath(join(dir, 'link.png'), answer(true)), join(dir, 'target.png'));
  assert.deepEqual(asked, [[join(dir, 'link.png'), join(dir, 'target.png')]]);
  await assert.rejects(confirmedRealPath(join(dir, 'link.png'), answer(false)), (e: unknown) => {
    assert.ok(e instanceof JackinError && e.code === 'E_SYMLINK_DECLINED');
    assert.match(e.message, /link\.png leads to .*target\.png through a symlink/);
    return true;
  });
  // Without a confirm (the host's own temporary files), the real path is read.
  assert.equal(await confirmedRealPath(join(dir, 'link.png'), undefined), join(dir, 'target.png'));
});

test('openExact: opens the resolved file; a symlink swapped in at its end or on its way is caught, not followed', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'f.png'), 'meant');
  mkdirSync(join(dir, 'elsewhere'));
  writeFileSync(join(dir, 'elsewhere', 'f.png'), 'other');
  const real = (await resolveHostPath(join(dir, 'sub', 'f.png'))).real;

  const fh = await openExact(real, 'f.png');
  assert.equal(await fh.readFile('utf8'), 'meant');
  await fh.close();

  // The directory on the way becomes a symlink between the check and the open.
  renameSync(join(dir, 'sub'), join(dir, 'sub-was'));
  symlinkSync(join(dir, 'elsewhere'), join(dir, 'sub'));
  await assert.rejects(openExact(real, 'f.png'), (e: unknown) => {
    assert.ok(e instanceof JackinError && e.code === 'E_CHANGED_WHILE_READING', String(e));
    assert.match(e.message, /elsewhere/);
    return true;
  });

  // The file itself becomes a symlink.
  rmSync(join(dir, 'sub'));
  renameSync(join(dir, 'sub-was'), join(dir, 'sub'));
  rmSync(join(dir, 'sub', 'f.png'));
  symlinkSync(join(dir, 'elsewhere', 'f.png'), join(dir, 'sub', 'f.png'));
  await assert.rejects(openExact(real, 'f.png'), code('E_CHANGED_WHILE_READING'));
  await assert.rejects(openExact(join(dir, 'gone.png'), 'gone.png'), code('E_PATH_NOT_FOUND'));
});
