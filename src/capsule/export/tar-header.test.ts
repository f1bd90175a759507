/**
 * The directory export's tar headers (tar-header.ts) are byte for byte tar-stream's, for any entry: names
 * of any length and any characters, symlinks with long targets, any mode and time; and sizes of 8 GiB and
 * more go in base-256, as GNU tar reads them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import type TarStream from 'tar-stream';
import { padded, TAR_BLOCK, tarHeader, type TarEntry } from './tar-header.ts';

const tarStream = createRequire(import.meta.url)('tar-stream') as typeof TarStream;

/** What tar-stream's pack writes for `e` (with `e.size` zero bytes of content), up to the content. */
async function packed(e: TarEntry): Promise<Buffer> {
  const pack = tarStream.pack();
  const base = { name: e.name, mode: e.mode, mtime: e.mtime, uid: 0, gid: 0, uname: '', gname: '' };
  if (e.type === 'file') pack.entry({ ...base, type: 'file' }, Buffer.alloc(e.size));
  else if (e.type === 'directory') pack.entry({ ...base, type: 'directory' });
  else pack.entry({ ...base, type: 'symlink', linkname: e.linkname ?? '' });
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as AsyncIterable<Buffer>) chunks.push(c);
  const all = Buffer.concat(chunks);
  return all.subarray(0, all.length - 2 * TAR_BLOCK - padded(e.type === 'file' ? e.size : 0));
}

// Names as the archiver makes them: components without '/' or NUL, joined by '/'; any characters, any lengths.
const component = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('a', 'b', '.', '-', ' '),
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 120,
  })
  .filter((s) => !s.includes('/') && !s.includes('\0'));
const name = fc.array(component, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('/'));
const mtime = fc.integer({ min: 0, max: 2 ** 31 - 1 }).map((s) => new Date(s * 1000));
const mode = fc.integer({ min: 0, max: 0o177777 });
const entry: fc.Arbitrary<TarEntry> = fc.oneof(
  fc.record({ name, type: fc.constant('file' as const), mode, mtime, size: fc.integer({ min: 0, max: 3000 }) }),
  fc.record({ name, type: fc.constant('directory' as const), mode, mtime, size: fc.constant(0) }),
  fc.record({
    name,
    type: fc.constant('symlink' as const),
    mode,
    mtime,
    size: fc.constant(0),
    linkname: component.chain((c) => fc.constantFrom(c, `${c}/${c}`, `../${c}`)),
  }),
);

test('tar headers: any entry gets the bytes tar-stream writes (ustar, or pax for names and targets that do not fit)', async () => {
  await fc.assert(
    fc.asyncProperty(entry, async (e) => {
      assert.deepEqual(tarHeader(e), await packed(e));
    }),
    { numRuns: 400 },
  );
});

test('tar headers: the cases the property must reach: a split name, a pax name, a pax target, a non-ASCII name', async () => {
  const t = new Date(1_700_000_000_000);
  const cases: TarEntry[] = [
    { name: `${'d'.repeat(90)}/${'f'.repeat(90)}`, type: 'file', mode: 0o644, mtime: t, size: 5 },
    { name: 'x'.repeat(101), type: 'file', mode: 0o644, mtime: t, size: 0 },
    { name: 'link', type: 'symlink', mode: 0o777, mtime: t, size: 0, linkname: 't'.repeat(101) },
    { name: 'dir/naïve.txt', type: 'file', mode: 0o600, mtime: t, size: 1 },
  ];
  const sizes = cases.map((c) => tarHeader(c).length);
  assert.deepEqual(sizes, [TAR_BLOCK, 3 * TAR_BLOCK, 3 * TAR_BLOCK, 3 * TAR_BLOCK]);
  assert.equal(
    tarHeader(cases[0] as TarEntry)
      .subarray(345, 345 + 90)
      .toString(),
    'd'.repeat(90),
    'the directory went to the prefix',
  );
  for (const c of cases) assert.deepEqual(tarHeader(c), await packed(c));
});

test('tar headers: a size of 8 GiB or more is stored in base-256 (the octal field holds 11 digits)', () => {
  const at = (size: number) => tarHeader({ name: 'big', type: 'file', mode: 0o644, mtime: new Date(0), size }).subarray(124, 136);
  assert.equal(at(8 * 1024 ** 3 - 1).toString('latin1'), '77777777777 ');
  const big = at(8 * 1024 ** 3 + 513);
  assert.equal(big[0], 0x80);
  assert.deepEqual([...big.subarray(1)], [0, 0, 0, 0, 0, 0, 0x02, 0x00, 0x00, 0x02, 0x01]);
});
