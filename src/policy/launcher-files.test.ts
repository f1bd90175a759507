import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LAUNCHER_MAGIC_BYTES, launcherContent, launcherExtension, LAUNCHER_EXTENSIONS } from './launcher-files.ts';

test('launcherExtension names every launcher extension the operator could be tricked into opening', () => {
  for (const name of [
    'x.desktop',
    'x-1.desktop',
    'invoicetxt-1.exe',
    'a.BAT',
    'a.cmd',
    'a.com',
    'a.scr',
    'a.msi',
    'a.ps1',
    'a.vbs',
    'a.jar',
    'Thing.app',
    'a.command',
    'a.sh',
    'a.lnk',
    'a.url',
    'a.webloc',
    'a.terminal',
    'dir/sub/a.exe',
    'a.exe.',
    'a.exe  ',
  ]) {
    assert.match(launcherExtension(name) ?? '', /runs something when opened/u, name);
  }
  for (const name of ['report.txt', 'shot.png', 'out.tar.zst', 'exe', '.desktop', 'desktop', 'a.pdf', 'a.exe.txt']) {
    assert.equal(launcherExtension(name), null, name);
  }
});

test('launcherExtension agrees with the table for any stem and any case', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !/[./\\\s]/u.test(s)),
      fc.constantFrom(...LAUNCHER_EXTENSIONS),
      fc.boolean(),
      (stem, ext, upper) => {
        const e = upper ? ext.toUpperCase() : ext;
        assert.notEqual(launcherExtension(`${stem}.${e}`), null);
        assert.equal(launcherExtension(`${stem}.${e}.txt`), null);
      },
    ),
  );
});

test('launcherContent recognises desktop entries, scripts and programs by their first bytes', () => {
  assert.match(launcherContent(Buffer.from('[Desktop Entry]\nExec=x')) ?? '', /desktop launcher/u);
  assert.match(launcherContent(Buffer.from('#!/bin/sh')) ?? '', /script/u);
  assert.match(launcherContent(Buffer.from('MZ\x90\x00')) ?? '', /Windows program/u);
  assert.match(launcherContent(Buffer.from([0x7f, 0x45, 0x4c, 0x46])) ?? '', /Linux program/u);
  assert.match(launcherContent(Buffer.from([0xcf, 0xfa, 0xed, 0xfe])) ?? '', /macOS/u);
  assert.equal(launcherContent(Buffer.from('hello')), null);
  assert.equal(launcherContent(Buffer.from('#')), null);
  assert.equal(launcherContent(Buffer.alloc(0)), null);
});

test("launcherContent finds a desktop entry's header anywhere in the first 256 bytes, as a desktop does", () => {
  const comment = `# notes for the team\n${'#'.repeat(150)}\n\n`;
  for (const header of ['[Desktop Entry]', '[Desktop Action new]', '[KDE Desktop Entry]']) {
    assert.match(launcherContent(Buffer.from(`${comment}${header}\nExec=sh -c x\n`)) ?? '', /desktop launcher/u, header);
  }
  assert.ok(Buffer.byteLength(comment) < LAUNCHER_MAGIC_BYTES - 20);
  // Past the first 256 bytes a desktop no longer takes the file for an entry: neither do we.
  assert.equal(launcherContent(Buffer.from(`${'x'.repeat(LAUNCHER_MAGIC_BYTES)}[Desktop Entry]`)), null);
});
