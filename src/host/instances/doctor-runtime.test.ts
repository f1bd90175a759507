import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeCheck } from './doctor.ts';

const entry = (arch: 'x64' | 'arm64', current: boolean, codeCache: boolean) => ({
  name: `${arch}-node24.22.3-jackin0.1.0-abc`,
  arch,
  nodeVersion: '24.22.3',
  jackinVersion: '0.1.0',
  path: `/c/runtime/${arch}`,
  size: 1,
  codeCache,
  current,
});

test('runtimeCheck: the runtimes of this jackin cached, each with its arch, Node, code cache and path', () => {
  const c = runtimeCheck([entry('arm64', true, false), entry('x64', true, true)], '/c/runtime');
  assert.equal(c.name, 'runtime');
  assert.equal(c.status, 'ok');
  assert.equal(
    c.detail,
    'capsule runtimes cached: arm64 (Node 24.22.3, without a code cache, /c/runtime/arm64); x64 (Node 24.22.3, with a code cache, /c/runtime/x64)',
  );
});

test('runtimeCheck: none cached says where and how to fetch one; older builds are counted', () => {
  const none = runtimeCheck([], '/c/runtime');
  assert.match(none.detail, /^no capsule runtime of this jackin cached under \/c\/runtime: .*jackin runtime fetch \[--arch x64\|arm64\]/u);
  const older = runtimeCheck([entry('x64', false, true)], '/c/runtime');
  assert.match(older.detail, /\(1 of an older jackin build: jackin runtime rm removes them\)/u);
});
