import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CAPSULE_NODE_FLAGS } from '../instances/container-run-argv.ts';
import { CODE_CACHE_FLAGS, cacheDir, runtimeArch } from './runtime.ts';

test('runtimeArch: the names engines give each architecture, and null for others', () => {
  for (const a of ['amd64', 'x86_64', 'X86_64', ' amd64\n', 'linux/amd64']) assert.equal(runtimeArch(a), 'x64', a);
  for (const a of ['arm64', 'aarch64', 'arm64/v8', 'linux/arm64', 'linux/arm64/v8']) assert.equal(runtimeArch(a), 'arm64', a);
  for (const a of ['arm', 'arm/v7', '386', 's390x', 'ppc64le', 'riscv64', '', 'arm64/v9']) assert.equal(runtimeArch(a), null, a);
});

test('cacheDir: JACKIN_CACHE_DIR, else the platform user cache directory', () => {
  assert.equal(cacheDir({ JACKIN_CACHE_DIR: '/c', HOME: '/h' }, 'linux'), '/c');
  assert.equal(cacheDir({ JACKIN_CACHE_DIR: 'rel/c' }, 'linux'), join(process.cwd(), 'rel', 'c'));
  assert.equal(cacheDir({ HOME: '/h' }, 'linux'), '/h/.cache/jackin');
  assert.equal(cacheDir({ HOME: '/h', XDG_CACHE_HOME: '/x' }, 'linux'), '/x/jackin');
  assert.equal(cacheDir({ HOME: '/h', XDG_CACHE_HOME: '' }, 'linux'), '/h/.cache/jackin');
  assert.equal(cacheDir({ HOME: '/h' }, 'darwin'), '/h/Library/Caches/jackin');
  assert.ok(cacheDir({ HOME: '/h', LOCALAPPDATA: '/l' }, 'win32').startsWith('/l'));
});

test("the runtime's code cache is made under the capsule's own flags (CAPSULE_NODE_FLAGS), or V8 would refuse it", () => {
  assert.deepEqual(CODE_CACHE_FLAGS, CAPSULE_NODE_FLAGS);
});
