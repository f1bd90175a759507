import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { hasCode } from '../../errors.ts';
import { ImageStaging, stagedName } from './staging.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../../test/fixtures/images/${name}`, import.meta.url));

function runDir(): string {
  return mkdtempSync(join(tmpdir(), 'jackin-staging-test-'));
}

test('staging: writes the image byte-identical, 0600 file in a 0700 clipboard dir, extension from the bytes', async () => {
  const run = runDir();
  try {
    const s = new ImageStaging(run);
    for (const [name, ext] of [
      ['sample.png', 'png'],
      ['sample.jpg', 'jpg'],
      ['sample.gif', 'gif'],
      ['sample.webp', 'webp'],
      ['sample.tiff', 'tiff'],
    ] as const) {
      const staged = await s.stage(fixture(name));
      assert.equal(dirname(staged.path), join(run, 'clipboard'));
      assert.match(basename(staged.path), new RegExp(`^clip-\\d{8}-\\d{6}-[0-9a-f]{16}\\.${ext}$`));
      assert.ok(readFileSync(staged.path).equals(fixture(name)));
      assert.equal(statSync(staged.path).mode & 0o777, 0o600);
      assert.equal(staged.bytes, fixture(name).length);
    }
    assert.equal(statSync(join(run, 'clipboard')).mode & 0o777, 0o700);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('staging: the format comes from the bytes; a different declared format is reported, not used', async () => {
  const run = runDir();
  try {
    const staged = await new ImageStaging(run).stage(fixture('sample.jpg'), 'png');
    assert.equal(staged.format, 'jpeg');
    assert.equal(staged.declaredFormat, 'png');
    assert.ok(staged.path.endsWith('.jpg'));
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('staging: re-validates, so svg, text, a truncated PNG and an oversize image leave no file', async () => {
  const run = runDir();
  try {
    const s = new ImageStaging(run, { maxBytes: 200 });
    await assert.rejects(s.stage(fixture('sample.svg')), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
    await assert.rejects(s.stage(Buffer.from('text')), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
    await assert.rejects(s.stage(fixture('sample.png').subarray(0, 16)), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
    await assert.rejects(s.stage(fixture('sample.tiff')), (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'));
    const dir = join(run, 'clipboard');
    assert.equal(existsSync(dir) ? readdirSync(dir).length : 0, 0);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('staging: a name collision never overwrites; the next random name is used', async () => {
  const run = runDir();
  try {
    const fixed = Buffer.alloc(8, 0xab);
    const randoms = [fixed, fixed, Buffer.alloc(8, 0xcd)];
    const s = new ImageStaging(run, { random: () => randoms.shift()!, now: () => new Date(Date.UTC(2026, 0, 30, 10, 15, 2)) });
    const first = await s.stage(fixture('sample.png'));
    const second = await s.stage(fixture('sample.gif'));
    assert.equal(first.name, 'clip-20260130-101502-abababababababab.png');
    assert.equal(second.name, 'clip-20260130-101502-abababababababab.gif');
    const third = await s.stage(fixture('sample.png'));
    assert.equal(third.name, 'clip-20260130-101502-cdcdcdcdcdcdcdcd.png');
    assert.ok(readFileSync(first.path).equals(fixture('sample.png')), 'first file untouched');
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('staging: names carry only time and randomness', () => {
  assert.equal(
    stagedName('tiff', new Date(Date.UTC(2026, 11, 1, 1, 2, 3)), Buffer.from('0011223344556677', 'hex')),
    'clip-20261201-010203-0011223344556677.tiff',
  );
});

test('staging: a symlink in place of the directory is refused; a wider mode is tightened', async () => {
  const run = runDir();
  try {
    const elsewhere = join(run, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(run, 'clipboard'));
    await assert.rejects(new ImageStaging(run).stage(fixture('sample.png')), (e) => hasCode(e, 'E_STAGING_UNSAFE'));
    assert.equal(readdirSync(elsewhere).length, 0);

    rmSync(join(run, 'clipboard'));
    mkdirSync(join(run, 'clipboard'));
    chmodSync(join(run, 'clipboard'), 0o777);
    await new ImageStaging(run).stage(fixture('sample.png'));
    assert.equal(statSync(join(run, 'clipboard')).mode & 0o777, 0o700);
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});

test('staging: cleanup removes the directory and its files', async () => {
  const run = runDir();
  try {
    const s = new ImageStaging(run);
    const staged = await s.stage(fixture('sample.png'));
    await s.cleanup();
    assert.equal(existsSync(staged.path), false);
    assert.equal(existsSync(join(run, 'clipboard')), false);
    await s.cleanup();
  } finally {
    rmSync(run, { recursive: true, force: true });
  }
});
