import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { hostLibraries, LOADER_NAME, parseLdd, ptyBinary } from './host-libraries.ts';

test('parseLdd: libraries by the name asked, the loader, the vDSO skipped, a library not found said', () => {
  const out = [
    '\tlinux-vdso.so.1 (0x00007ffd5c1f2000)',
    '\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f3193800000)',
    '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f319361e000)',
    '\tlibgone.so.1 => not found',
    '\t/lib64/ld-linux-x86-64.so.2 (0x00007f3193b76000)',
    '',
  ].join('\n');
  const needs = parseLdd(out);
  assert.deepEqual(
    [...needs.libraries],
    [
      ['libstdc++.so.6', '/lib/x86_64-linux-gnu/libstdc++.so.6'],
      ['libc.so.6', '/lib/x86_64-linux-gnu/libc.so.6'],
    ],
  );
  assert.equal(needs.loader, '/lib64/ld-linux-x86-64.so.2');
  assert.deepEqual(needs.missing, ['libgone.so.1']);
  assert.deepEqual(parseLdd('\tnot a dynamic executable\n'), { libraries: new Map(), loader: null, missing: [] });
});

test("hostLibraries: this host's Node and PTY binary lend the loader first, then every library they need, by real path", async () => {
  const pty = ptyBinary(PACKAGE_ROOT);
  assert.ok(pty !== null && existsSync(pty), 'the PTY binary of this platform is installed');
  const lent = await hostLibraries([realpathSync(process.execPath), pty]);
  assert.ok(lent !== null, 'a glibc host lends its libraries');
  assert.equal(lent[0]!.name, LOADER_NAME);
  const names = lent.map((l) => l.name);
  // libutil is the PTY binary's alone: both binaries' needs are lent.
  for (const name of ['libc.so.6', 'libstdc++.so.6', 'libutil.so.1']) assert.ok(names.includes(name), `${name} in ${names.join(' ')}`);
  for (const l of lent) assert.equal(realpathSync(l.path), l.path, 'symlinks resolved: the engine mounts the file itself');
  assert.equal(new Set(names).size, names.length);
});

test('hostLibraries: a binary ldd cannot read (a script, no loader) lends nothing', async () => {
  assert.equal(await hostLibraries([join(PACKAGE_ROOT, 'container-bin', 'jackin-capsule')]), null);
});
