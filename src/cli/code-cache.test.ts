import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadWithCodeCache, writeCodeCache } from './code-cache.ts';

function tempModule(t: { after(fn: () => void): void }): { dir: string; file: string; cache: string } {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-code-cache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A module that needs what Node gives a CommonJS module: require (relative, built-in), module, exports,
  // __filename and __dirname, and `this` as exports.
  writeFileSync(join(dir, 'helper.cjs'), 'module.exports = (x) => x * 2;\n');
  const file = join(dir, 'main.cjs');
  writeFileSync(
    file,
    [
      "const double = require('./helper.cjs');",
      "const { basename } = require('node:path');",
      'exports.answer = double(21);',
      'exports.names = [basename(__filename), __dirname];',
      'exports.thisIsExports = this === exports;',
      'module.exports.later = () => 1 + 1;',
    ].join('\n'),
  );
  return { dir, file, cache: join(dir, 'main.cache') };
}

test('loadWithCodeCache runs a CommonJS file as Node would, with or without a cache', (t) => {
  const m = tempModule(t);
  const expected = { answer: 42, names: ['main.cjs', m.dir], thisIsExports: true };
  const missing = loadWithCodeCache(m.file, m.cache);
  assert.equal(missing.cache, 'missing');
  const e = missing.exports as typeof expected & { later: () => number };
  assert.deepEqual({ answer: e.answer, names: e.names, thisIsExports: e.thisIsExports }, expected);
  assert.equal(e.later(), 2);

  assert.ok(writeCodeCache(m.file, m.cache) > 0);
  const cached = loadWithCodeCache(m.file, m.cache);
  assert.equal(cached.cache, 'accepted');
  assert.equal((cached.exports as typeof expected).answer, 42);
});

test('a cache V8 refuses (another source, garbage) is ignored: the file is compiled and runs', (t) => {
  const m = tempModule(t);
  writeCodeCache(m.file, m.cache);
  // The same file changed after the cache was made (a rebuilt bundle, a stale cache).
  writeFileSync(m.file, readFileSync(m.file, 'utf8') + '\nexports.answer = 7;\n');
  const stale = loadWithCodeCache(m.file, m.cache);
  assert.equal(stale.cache, 'rejected');
  assert.equal((stale.exports as { answer: number }).answer, 7);
  // A source V8 compiled before in this process comes from its own compilation cache, whatever the file
  // says: so a new source for the garbage case.
  writeFileSync(m.file, readFileSync(m.file, 'utf8') + '\nexports.answer = 8;\n');
  writeFileSync(m.cache, Buffer.from('not a code cache'));
  const garbage = loadWithCodeCache(m.file, m.cache);
  assert.equal(garbage.cache, 'rejected');
  assert.equal((garbage.exports as { answer: number }).answer, 8);
});

test('code run through the cache loader cannot import(); through bin/esm-import.js it can (how `open` is loaded)', async (t) => {
  const m = tempModule(t);
  const helper = fileURLToPath(new URL('../../bin/esm-import.js', import.meta.url));
  writeFileSync(m.file, `exports.direct = () => import('node:os');\nexports.helped = () => require(${JSON.stringify(helper)})('node:os');\n`);
  const loaded = loadWithCodeCache(m.file, m.cache).exports as { direct: () => Promise<unknown>; helped: () => Promise<{ EOL: string }> };
  await assert.rejects(loaded.direct(), /dynamic import callback/i);
  assert.equal((await loaded.helped()).EOL, '\n');
});

test('writeCodeCache leaves no temporary file, and a file that does not compile leaves no cache', (t) => {
  const m = tempModule(t);
  writeCodeCache(m.file, m.cache);
  assert.deepEqual(readdirSync(m.dir).sort(), ['helper.cjs', 'main.cache', 'main.cjs']);
  rmSync(m.cache);
  writeFileSync(m.file, 'this is not JavaScript (');
  assert.throws(() => writeCodeCache(m.file, m.cache), SyntaxError);
  assert.deepEqual(readdirSync(m.dir).sort(), ['helper.cjs', 'main.cjs']);
});
