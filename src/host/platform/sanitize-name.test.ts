import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_NAME_BYTES, fitName, sanitizeExportName } from './sanitize-name.ts';
import { inertText } from '../../ui/inert-text.ts';

test('ordinary names pass unchanged', () => {
  for (const n of ['report.txt', 'shot.png', 'tree.tar.zst', 'résumé 日本.pdf', 'a-b_c.d.e']) assert.equal(sanitizeExportName(n), n);
});

test('separators, leading dots, control and bidi characters are removed', () => {
  assert.equal(sanitizeExportName('../../etc/passwd'), 'passwd');
  assert.equal(sanitizeExportName('a\\b\\c.txt'), 'c.txt');
  assert.equal(sanitizeExportName('.bashrc'), 'bashrc');
  assert.equal(sanitizeExportName('..'), 'export');
  assert.equal(sanitizeExportName(''), 'export');
  assert.equal(sanitizeExportName('dir/'), 'export');
  assert.equal(sanitizeExportName('a\x1b[31mb\nc\x00.txt'), 'a[31mbc.txt');
  assert.equal(sanitizeExportName('invoice\u202Egpj.exe'), 'invoicegpj.exe');
  assert.equal(sanitizeExportName('what?<>:|*".txt'), 'what_______.txt');
  assert.equal(sanitizeExportName('trailing. . '), 'trailing');
});

test('Windows reserved device names are prefixed', () => {
  assert.equal(sanitizeExportName('CON'), '_CON');
  assert.equal(sanitizeExportName('nul.txt'), '_nul.txt');
  assert.equal(sanitizeExportName('com1.tar.zst'), '_com1.tar.zst');
  assert.equal(sanitizeExportName('console.txt'), 'console.txt');
});

test('long names are cut to 255 bytes on a code point boundary, keeping the extension', () => {
  const n = sanitizeExportName(`${'é'.repeat(300)}.tar.zst`);
  assert.ok(Buffer.byteLength(n) <= MAX_NAME_BYTES);
  assert.ok(n.endsWith('é.tar.zst'));
  assert.ok(!n.includes('\ufffd'));
  const suffixed = fitName('x'.repeat(300), '-12', '.png');
  assert.equal(Buffer.byteLength(suffixed), MAX_NAME_BYTES);
  assert.ok(suffixed.endsWith('x-12.png'));
});

test('property: output is a non-empty single safe component of at most 255 bytes', () => {
  const unit = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('/', '\\', '.', '..', '\u0000', '\u001b', '\u007f', '\u0085', '\u202e', 'CON', '.txt', ' ', 'é', '日本'),
  );
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 30 }), (parts) => {
      const out = sanitizeExportName(parts.join(''));
      assert.ok(out.length > 0);
      assert.ok(!out.includes('/') && !out.includes('\\'), out);
      assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(out), JSON.stringify(out));
      assert.ok(!out.startsWith('.'), out);
      assert.ok(Buffer.byteLength(out) <= MAX_NAME_BYTES, out);
      assert.ok(out !== '.' && out !== '..');
      assert.equal(sanitizeExportName(out), out, 'sanitising is idempotent');
    }),
    { numRuns: 3000 },
  );
});

test('names and inert text share one unsafe set: no kept name needs escaping, and what only inert text escaped is dropped', () => {
  // U+061C and the line/paragraph separators were escaped on screen but kept in names; zero-width characters
  // and invisible operators the other way round.
  for (const cp of [0x061c, 0x2028, 0x2029, 0x200b, 0x200d, 0x2060, 0x2064, 0xe0041]) {
    assert.equal(sanitizeExportName(`a${String.fromCodePoint(cp)}b.txt`), 'ab.txt', cp.toString(16));
  }
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
      const name = sanitizeExportName(s);
      assert.equal(inertText(name, 10_000), name);
    }),
  );
});
