import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePolicy } from './load.ts';
import { DEFAULT_POLICY } from './schema.ts';
import { GiB, MiB, parseSize } from './size.ts';
import { JackinError } from '../errors.ts';

const policiesDir = fileURLToPath(new URL('../../policies/', import.meta.url));

function invalidWith(text: string, ...needles: string[]): void {
  assert.throws(
    () => parsePolicy(text, 'test.json'),
    (e: unknown) => {
      assert.ok(e instanceof JackinError);
      assert.equal(e.code, 'E_POLICY_INVALID');
      for (const n of needles) assert.ok(e.message.includes(n), `message ${e.message} should name ${n}`);
      return true;
    },
  );
}

test('every shipped policy file loads, and default.json is the built-in default', () => {
  const files = readdirSync(policiesDir).filter((f) => f.endsWith('.json'));
  assert.ok(files.includes('default.json'));
  for (const f of files) parsePolicy(readFileSync(join(policiesDir, f), 'utf8'), f);
  assert.deepEqual(parsePolicy(readFileSync(join(policiesDir, 'default.json'), 'utf8'), 'default.json'), DEFAULT_POLICY);
});

test('a policy with only a version takes every default', () => {
  assert.deepEqual(parsePolicy('{"version":1}', 'x'), DEFAULT_POLICY);
});

test('given fields override defaults and sizes accept units', () => {
  const p = parsePolicy(
    JSON.stringify({
      version: 1,
      export: { roots: ['/data', '${workspace}/out'], maxFileBytes: '1.5 GiB', directories: { enabled: false }, outsideRoots: 'confirm' },
    }),
    'x',
  );
  assert.deepEqual(p.export.roots, ['/data', '${workspace}/out']);
  assert.equal(p.export.maxFileBytes, 1.5 * GiB);
  assert.equal(p.export.directories.enabled, false);
  assert.equal(p.export.directories.maxEntries, DEFAULT_POLICY.export.directories.maxEntries);
  assert.equal(p.export.outsideRoots, 'confirm');
});

test('unknown keys are errors naming the key path', () => {
  invalidWith('{"version":1,"exprt":{}}', 'exprt');
  invalidWith('{"version":1,"export":{"rootz":[]}}', 'export.rootz');
  invalidWith('{"version":1,"export":{"directories":{"maxEntrys":3}}}', 'export.directories.maxEntrys');
});

test('wrong values are errors naming the key and the value', () => {
  invalidWith('not json', 'not valid JSON');
  invalidWith('[]', 'must be an object');
  invalidWith('{}', 'version');
  invalidWith('{"version":2}', 'version', '2');
  invalidWith('{"version":1,"export":{"maxFileBytes":-1}}', 'export.maxFileBytes', '-1');
  invalidWith('{"version":1,"export":{"maxFileBytes":"12 parsecs"}}', 'export.maxFileBytes', 'parsecs');
  invalidWith('{"version":1,"export":{"outsideRoots":"allow"}}', 'export.outsideRoots', 'allow');
  invalidWith('{"version":1,"export":{"directories":{"enabled":"yes"}}}', 'export.directories.enabled');
  invalidWith('{"version":1,"export":{"directories":{"maxEntries":1.5}}}', 'export.directories.maxEntries');
  invalidWith('{"version":1,"export":{"roots":"/data"}}', 'export.roots');
});

test('roots must be absolute or start with a known placeholder', () => {
  invalidWith('{"version":1,"export":{"roots":["relative/dir"]}}', 'export.roots[0]', 'absolute');
  invalidWith('{"version":1,"export":{"roots":["/ok","${home}/x"]}}', 'export.roots[1]', '${home}');
  invalidWith('{"version":1,"export":{"roots":["/a/${run}"]}}', 'export.roots[0]', 'only at its start');
  invalidWith('{"version":1,"export":{"roots":[""]}}', 'export.roots[0]');
});

test('parseSize reads integers and unit strings and rejects the rest', () => {
  assert.equal(parseSize(0), 0);
  assert.equal(parseSize('512 MiB'), 512 * MiB);
  assert.equal(parseSize('10B'), 10);
  assert.equal(parseSize(1.5), undefined);
  assert.equal(parseSize('1 MB'), undefined);
  assert.equal(parseSize(null), undefined);
});
