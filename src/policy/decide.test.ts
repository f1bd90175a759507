import { test } from 'node:test';
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import fc from 'fast-check';
import { containerPath, decideDirectory, decideFileSize, decideLocation, expandRoots, isInside } from './decide.ts';
import { DEFAULT_POLICY, type Policy } from './schema.ts';
import { JackinError } from '../errors.ts';

test('expandRoots replaces placeholders and normalises', () => {
  assert.deepEqual(expandRoots(DEFAULT_POLICY.export.roots, { workspace: '/work/', run: '/jackin/run' }), [
    '/work',
    '/jackin/run/clipboard',
    '/jackin/run/uploads',
  ]);
  assert.deepEqual(expandRoots(['/a/../b/', '/b'], { workspace: '/w', run: '/r' }), ['/b']);
});

test('isInside is component-wise, never a string prefix', () => {
  assert.equal(isInside('/a/b', '/a/b'), true);
  assert.equal(isInside('/a/b', '/a/b/c'), true);
  assert.equal(isInside('/a/b', '/a/bc'), false);
  assert.equal(isInside('/a/b', '/a'), false);
  assert.equal(isInside('/', '/etc'), true);
});

test('decideLocation allows inside, denies or asks outside per policy', () => {
  assert.deepEqual(decideLocation('/w/x', ['/r', '/w'], 'deny'), { kind: 'allow', root: '/w' });
  assert.deepEqual(decideLocation('/etc/passwd', ['/w'], 'deny'), { kind: 'deny' });
  assert.deepEqual(decideLocation('/etc/passwd', ['/w'], 'confirm'), { kind: 'confirm' });
});

test('size and directory caps', () => {
  const p: Policy = { version: 1, export: { ...DEFAULT_POLICY.export, maxFileBytes: 10, directories: { enabled: true, maxEntries: 2, maxTotalBytes: 5 } } };
  assert.deepEqual(decideFileSize(10, p), { kind: 'allow' });
  assert.deepEqual(decideFileSize(11, p), { kind: 'too-large', cap: 10 });
  assert.deepEqual(decideDirectory(2, 5, p), { kind: 'allow' });
  assert.deepEqual(decideDirectory(3, 0, p), { kind: 'too-many-entries', cap: 2 });
  assert.deepEqual(decideDirectory(1, 6, p), { kind: 'too-many-bytes', cap: 5 });
  const off: Policy = { version: 1, export: { ...p.export, directories: { ...p.export.directories, enabled: false } } };
  assert.deepEqual(decideDirectory(0, 0, off), { kind: 'disabled' });
});

test('containerPath refuses empty, NUL and overlong paths', () => {
  for (const bad of ['', 'a\0b', 'x'.repeat(5000)]) {
    assert.throws(
      () => containerPath(bad, '/w'),
      (e: unknown) => e instanceof JackinError && e.code === 'E_BAD_PATH',
    );
  }
  assert.equal(containerPath('a/../b', '/w'), '/w/b');
  assert.equal(containerPath('/etc/../etc/hosts', '/w'), '/etc/hosts');
});

const segment = fc.oneof(
  fc.constantFrom('..', '.', '', 'a', 'b', 'w', 'wx'),
  fc.string({ minLength: 1, maxLength: 4 }).filter((s) => !s.includes('/') && !s.includes('\0')),
);

test('property: a lexically resolved path is inside the workspace only when no `..` climbs out of it', () => {
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 12 }), fc.boolean(), (segs, absolute) => {
      const input = (absolute ? '/' : '') + segs.join('/');
      fc.pre(input.length > 0);
      const p = containerPath(input, '/w');
      assert.ok(posix.isAbsolute(p));
      assert.equal(p, posix.normalize(p));
      // Walk the segments by hand: the depth below /w never goes negative for an inside result.
      // A leading empty segment makes the input absolute too.
      let stack: string[] = input.startsWith('/') ? [] : ['w'];
      for (const s of segs) {
        if (s === '..') stack = stack.slice(0, -1);
        else if (s !== '.' && s !== '') stack.push(s);
      }
      const expectedInside = stack[0] === 'w';
      assert.equal(isInside('/w', p), expectedInside, `${input} -> ${p}`);
      assert.equal(decideLocation(p, ['/w'], 'deny').kind, expectedInside ? 'allow' : 'deny');
    }),
    { numRuns: 2000 },
  );
});
