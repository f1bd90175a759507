import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { otherLineNode } from '../../test/helpers/node-lines.ts';
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

test('loadWithCodeCache runs a CommonJS file as Node would, with or without a cache', async (t) => {
  const m = tempModule(t);
  const expected = { answer: 42, names: ['main.cjs', m.dir], thisIsExports: true };
  const missing = loadWithCodeCache(m.file, m.cache);
  assert.equal(missing.cache, 'missing');
  const e = missing.exports as typeof expected & { later: () => number };
  assert.deepEqual({ answer: e.answer, names: e.names, thisIsExports: e.thisIsExports }, expected);
  assert.equal(e.later(), 2);

  assert.ok((await writeCodeCache(m.file, m.cache)) > 0);
  const cached = loadWithCodeCache(m.file, m.cache);
  assert.equal(cached.cache, 'accepted');
  assert.equal((cached.exports as typeof expected).answer, 42);
});

test('a cache V8 refuses (another source, garbage) is ignored: the file is compiled and runs', async (t) => {
  const m = tempModule(t);
  await writeCodeCache(m.file, m.cache);
  // The same file changed after the cache was made (a rebuilt bundle, a stale cache).
  writeFileSync(m.file, `${readFileSync(m.file, 'utf8')}\nexports.answer = 7;\n`);
  const stale = loadWithCodeCache(m.file, m.cache);
  assert.equal(stale.cache, 'rejected');
  assert.equal((stale.exports as { answer: number }).answer, 7);
  // A source V8 compiled before in this process comes from its own compilation cache, whatever the file
  // says: so a new source for the garbage case.
  writeFileSync(m.file, `${readFileSync(m.file, 'utf8')}\nexports.answer = 8;\n`);
  writeFileSync(m.cache, Buffer.from('not a code cache'));
  const garbage = loadWithCodeCache(m.file, m.cache);
  assert.equal(garbage.cache, 'rejected');
  assert.equal((garbage.exports as { answer: number }).answer, 8);
});

test('a cache made by the other tested Node line (another V8) is refused by this one, and the file still runs', async (t) => {
  const m = tempModule(t);
  const other = otherLineNode();
  // The other Node writes the cache as the build does (scripts/bundle.mjs), through the built loader.
  const loader = fileURLToPath(new URL('../../dist/code-cache.bundle.cjs', import.meta.url));
  const written = `require(process.argv[1]).writeCodeCache(process.argv[2], process.argv[3]).then((n) => console.log(process.version, n))`;
  const out = execFileSync(other.node, ['-e', written, loader, m.file, m.cache], { encoding: 'utf8' }).trim().split(' ');
  assert.equal(out[0], `v${other.version}`);
  assert.ok(Number(out[1]) > 0, `the other Node wrote a cache: ${out.join(' ')}`);
  const foreign = loadWithCodeCache(m.file, m.cache);
  assert.equal(foreign.cache, 'rejected', `Node ${process.version} accepted a cache from ${other.version}`);
  assert.equal((foreign.exports as { answer: number }).answer, 42);
  // The Node that made it accepts it: the refusal above is the version's, not a broken cache.
  const own = `console.log(require(process.argv[1]).loadWithCodeCache(process.argv[2], process.argv[3]).cache)`;
  assert.equal(execFileSync(other.node, ['-e', own, loader, m.file, m.cache], { encoding: 'utf8' }).trim(), 'accepted');
});

test('code run through the cache loader cannot import(); through bin/esm-import.js it can (how `open` is loaded)', async (t) => {
  const m = tempModule(t);
  const helper = fileURLToPath(new URL('../../bin/esm-import.js', import.meta.url));
  writeFileSync(m.file, `exports.direct = () => import('node:os');\nexports.helped = () => require(${JSON.stringify(helper)})('node:os');\n`);
  const loaded = loadWithCodeCache(m.file, m.cache).exports as { direct: () => Promise<unknown>; helped: () => Promise<{ EOL: string }> };
  await assert.rejects(loaded.direct(), /dynamic import callback/i);
  assert.equal((await loaded.helped()).EOL, '\n');
});

test('writeCodeCache leaves no temporary file, and a file that does not compile leaves no cache', async (t) => {
  const m = tempModule(t);
  await writeCodeCache(m.file, m.cache);
  assert.deepEqual(readdirSync(m.dir).sort(), ['helper.cjs', 'main.cache', 'main.cjs']);
  rmSync(m.cache);
  writeFileSync(m.file, 'this is not JavaScript (');
  await assert.rejects(writeCodeCache(m.file, m.cache), SyntaxError);
  assert.deepEqual(readdirSync(m.dir).sort(), ['helper.cjs', 'main.cjs']);
});

test('writeCodeCache runs the module and its warm-up first: the cache then holds the functions they ran', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-code-cache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Functions V8 compiles only when they first run: big enough that their bytecode shows in the cache's size.
  const lazy = Array.from(
    { length: 40 },
    (_, i) => `function f${i}(x) { let s = 0; for (let j = 0; j < x; j++) s += (j * ${i + 1}) % 7; return s + ${i}; }`,
  ).join('\n');
  const calls = Array.from({ length: 40 }, (_, i) => `f${i}(10)`).join(' + ');
  const withWarmUp = join(dir, 'warm.cjs');
  const without = join(dir, 'plain.cjs');
  const marker = join(dir, 'warmed');
  writeFileSync(
    withWarmUp,
    `${lazy}\nexports.warmUpForCodeCache = async () => { require('node:fs').writeFileSync(${JSON.stringify(marker)}, String(${calls})); };\n`,
  );
  writeFileSync(without, `${lazy}\nexports.unused = () => ${calls};\n`);
  const warmSize = await writeCodeCache(withWarmUp, join(dir, 'warm.cache'));
  const plainSize = await writeCodeCache(without, join(dir, 'plain.cache'));
  assert.ok(readFileSync(marker, 'utf8').length > 0, 'the warm-up ran');
  assert.ok(warmSize > plainSize + 2000, `the warmed cache (${warmSize} B) holds more than the cold one (${plainSize} B)`);
  assert.equal(loadWithCodeCache(withWarmUp, join(dir, 'warm.cache')).cache, 'accepted');
});
