/**
 * Error codes are documented in one place: docs/errors.md has one table row per code of ERROR_CODES
 * (src/errors.ts), and no row for a code that does not exist. Every code the sources use is in the list
 * (the type checker enforces that for `new JackinError(...)`; this test also covers codes in plain strings).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES, exitStatusOf, isErrorCode, JackinError, REFUSAL_CODES, refusedOrFailed } from '../src/errors.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function documentedCodes(): string[] {
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  return [...text.matchAll(/^\| `(E_[A-Z0-9_]+)` \|(.*)$/gm)].map((m) => {
    const cells = m[2]!.split(' | ');
    assert.equal(cells.length, 3, `${m[1]}: a row has a meaning, an exit status and a fix`);
    assert.ok(
      cells.every((c) => c.trim().replace(/\|$/, '').trim() !== ''),
      `${m[1]}: an empty cell`,
    );
    return m[1]!;
  });
}

test('docs/errors.md documents every code of ERROR_CODES once, and nothing else', () => {
  const documented = documentedCodes();
  assert.ok(documented.length > 80, `only ${documented.length} rows were found: the table format changed?`);
  const twice = documented.filter((c, i) => documented.indexOf(c) !== i);
  assert.deepEqual(twice, [], 'documented twice');
  assert.deepEqual([...documented].sort(), [...ERROR_CODES].sort());
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length, 'ERROR_CODES has no duplicates');
});

test('docs/errors.md lists exactly the refusal codes of REFUSAL_CODES', () => {
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  const block = /<!-- refusal codes -->([\s\S]*?)<!-- end refusal codes -->/.exec(text);
  assert.ok(block !== null, 'the refusal list is marked in docs/errors.md');
  const listed = [...block[1]!.matchAll(/`(E_[A-Z0-9_]+)`/g)].map((m) => m[1]);
  assert.deepEqual(listed, [...REFUSAL_CODES]);
});

test('the exit status column of docs/errors.md agrees with exitStatusOf for every code that ends a command', () => {
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  for (const m of text.matchAll(/^\| `(E_[A-Z0-9_]+)` \| .*? \| ([^|]*?) \| /gm)) {
    const code = m[1]!;
    if (!isErrorCode(code)) continue;
    // The statuses a cell states outside its parentheses; one that gives two (one per command) is not checked.
    const cell = m[2]!.trim();
    const stated = new Set([...cell.replace(/\([^)]*\)/g, '').matchAll(/\b(\d+)\b/g)].map((n) => Number(n[1])));
    if (stated.size !== 1) continue;
    assert.equal(exitStatusOf(code), [...stated][0], `${code}: docs say ${cell}`);
  }
});

test('an action that ends in a refusal code is refused, in any other error failed', () => {
  assert.equal(refusedOrFailed(new JackinError('E_DIR_DISABLED', 'directories are off')), 'refused');
  assert.equal(refusedOrFailed(new JackinError('E_NOT_REGULAR', 'a FIFO')), 'refused');
  assert.equal(refusedOrFailed(new JackinError('E_NOT_FOUND', 'gone')), 'failed');
  assert.equal(refusedOrFailed(new Error('a bug')), 'failed');
  assert.equal(new JackinError('E_USAGE', 'x').exitCode, 2);
  assert.equal(new JackinError('E_STAGE_ABORTED', 'x').exitCode, 130);
  assert.equal(new JackinError('E_POLICY_DENIED', 'x').exitCode, 1);
});

test('every E_ code written in the sources is in ERROR_CODES', () => {
  const src = join(root, 'src');
  const unknown = new Set<string>();
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    for (const m of readFileSync(join(src, f), 'utf8').matchAll(/['"`](E_[A-Z0-9_]+)['"`]/g)) {
      if (!isErrorCode(m[1])) unknown.add(`${f}: ${m[1]}`);
    }
  }
  assert.deepEqual([...unknown], []);
});

test('a code from the other side of a connection is kept only when it is one of ours', async () => {
  const { EXPORT_METHOD, readControlReply } = await import('../src/protocol/index.ts');
  const thrown = (reply: unknown): JackinError => {
    try {
      readControlReply(EXPORT_METHOD, reply);
    } catch (e) {
      assert.ok(e instanceof JackinError, String(e));
      return e;
    }
    return assert.fail('no error');
  };
  assert.equal(thrown({ ok: false, code: 'E_TOO_LARGE', message: 'big' }).code, 'E_TOO_LARGE');
  const unknown = thrown({ ok: false, code: 'E_FROM_A_NEWER_CAPSULE', message: 'new' });
  assert.equal(unknown.code, 'E_CONTROL_REPLY');
  assert.equal(unknown.message, '"E_FROM_A_NEWER_CAPSULE": new');
  assert.equal(thrown({ ok: false, code: 42, message: 'odd' }).code, 'E_CONTROL_REPLY');
  assert.ok(!isErrorCode('E_FROM_A_NEWER_CAPSULE') && isErrorCode('E_USAGE') && !isErrorCode(undefined));
});
