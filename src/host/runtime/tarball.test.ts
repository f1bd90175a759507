import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entryPath } from './tarball.ts';

test('entryPath: the path without its first component; anything that could land outside is refused', () => {
  assert.deepEqual(entryPath('package/bin/node'), { path: 'bin/node' });
  assert.deepEqual(entryPath('node-v24/./bin//node'), { path: 'bin/node' });
  assert.deepEqual(entryPath('package/'), { path: '' });
  for (const [name, why] of [
    ['package/../../x', /climbs out/u],
    ['../x', /climbs out/u],
    ['/etc/passwd', /absolute/u],
    ['package\\..\\x', /backslash/u],
    ['package/a\0b', /NUL/u],
  ] as const) {
    const r = entryPath(name);
    assert.ok('refused' in r && why.test(r.refused), `${name}: ${JSON.stringify(r)}`);
  }
});
