// wl-paste: no headless Wayland compositor runs here as root in the time allotted (sway headless needs a
// non-root user and a seat), so a stand-in wl-paste records its argv and serves canned types and bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../../../errors.ts';
import { createReader } from './select.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../../../test/fixtures/images/${name}`, import.meta.url));

function standIn(): { dir: string; env: NodeJS.ProcessEnv; serve(types: Record<string, Buffer>): void; calls(): string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-wlpaste-test-'));
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(
    join(dir, 'wl-paste'),
    `#!/bin/sh
printf '%s\\n' "$*" >> "${dir}/calls"
if [ "$1" = "--list-types" ]; then
  [ -s "${dir}/types" ] || { echo "Nothing is copied" >&2; exit 1; }
  cat "${dir}/types"; exit 0
fi
[ "$1" = "--no-newline" ] && [ "$2" = "--type" ] || { echo "bad argv" >&2; exit 2; }
f="${data}/$(printf '%s' "$3" | tr '/' '_')"
[ -f "$f" ] || { echo "No suitable type of content copied" >&2; exit 1; }
cat "$f"
`,
  );
  chmodSync(join(dir, 'wl-paste'), 0o755);
  writeFileSync(join(dir, 'types'), '');
  return {
    dir,
    env: { PATH: `${dir}:/usr/bin:/bin`, WAYLAND_DISPLAY: 'wayland-test' },
    serve(types) {
      rmSync(data, { recursive: true, force: true });
      mkdirSync(data);
      writeFileSync(
        join(dir, 'types'),
        Object.keys(types)
          .map((t) => `${t}\n`)
          .join(''),
      );
      for (const [t, b] of Object.entries(types)) writeFileSync(join(data, t.replace(/\//g, '_')), b);
      writeFileSync(join(dir, 'calls'), '');
    },
    calls: () =>
      readFileSync(join(dir, 'calls'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
  };
}

test('wl-paste reader: lists types, then requests the best image type (png > jpeg > gif > webp > tiff)', async () => {
  const s = standIn();
  try {
    const r = createReader({ kind: 'wl-paste' }, 'test', s.env, { timeoutMs: 5000, maxBytes: 1 << 20 });
    s.serve({ 'text/html': Buffer.from('<img>'), 'image/tiff': fixture('sample.tiff'), 'image/jpeg': fixture('sample.jpg') });
    const got = await r.readImage();
    assert.ok(got?.kind === 'image' && got.bytes.equals(fixture('sample.jpg')));
    assert.deepEqual(s.calls(), ['--list-types', '--no-newline --type image/jpeg']);

    s.serve({ 'text/plain;charset=utf-8': Buffer.from('hi') });
    assert.equal(await r.readImage(), null);

    s.serve({});
    assert.equal(await r.readImage(), null, '"Nothing is copied" is no image');

    s.serve({ 'image/svg+xml': fixture('sample.svg') });
    await assert.rejects(r.readImage(), (e) => hasCode(e, 'E_UNSUPPORTED_IMAGE'));
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test('wl-paste reader: a copied file wins over the icon image a file manager also offers', async () => {
  const s = standIn();
  try {
    const r = createReader({ kind: 'wl-paste' }, 'test', s.env, { timeoutMs: 5000, maxBytes: 1 << 20 });
    s.serve({ 'image/png': fixture('sample.png'), 'text/uri-list': Buffer.from('file:///home/me/shot%20one.webp\r\n') });
    assert.deepEqual(await r.readImage(), {
      kind: 'file',
      path: '/home/me/shot one.webp',
      paths: ['/home/me/shot one.webp'],
      offered: ['image/png', 'text/uri-list'],
    });
    assert.deepEqual(s.calls(), ['--list-types', '--no-newline --type text/uri-list']);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test('wl-paste reader: a missing wl-paste names apt-get install wl-clipboard', async () => {
  const r = createReader({ kind: 'wl-paste' }, 'test', { PATH: '/nonexistent' }, { timeoutMs: 5000, maxBytes: 1 << 20 });
  await assert.rejects(r.readImage(), (e) => hasCode(e, 'E_CLIPBOARD_BACKEND_MISSING') && /apt-get install wl-clipboard/.test((e as Error).message));
});
