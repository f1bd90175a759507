import { test } from 'node:test';
import { pollUntil } from '../../../test/helpers/poll.ts';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { plantSymlink } from '../../../test/helpers/planted-symlink.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import type { ClientFrame, Features, ServerFrame } from '../../protocol/index.ts';
import type { ClipboardContent, ClipboardReader } from '../platform/clipboard/types.ts';
import { imageFrames, installPasteFeature, pasteImagePathsEnabled } from './paste-feature.ts';
import { InputScanner } from '../terminal/input-scan.ts';

const png = readFileSync(new URL('../../../test/fixtures/images/sample.png', import.meta.url));

class FakeSession extends FakeFeatureSession {
  /** What the fake capsule answers to an image request. */
  answer: (requestId: bigint) => ServerFrame[] = (id) => [
    { type: 'ImageStaged', requestId: id, bytes: 1, pasted: true, path: '/run/clipboard/x.png' },
    { type: 'AttachControlResponse', requestId: id, result: 'success' },
  ];
  override sendFrame(f: ClientFrame): boolean {
    super.sendFrame(f);
    const done = f.type === 'AttachControl' && (f.body.kind === 'ClipboardImage' || f.body.kind === 'ClipboardImageEnd');
    if (done) setImmediate(() => this.answer(f.requestId).forEach((r) => this.emitFrame(r)));
    return true;
  }
}

function reader(content: ClipboardContent | null | Error, path: string | null = null): ClipboardReader {
  return {
    name: 'command',
    reason: 'test',
    readImage: async () => {
      if (content instanceof Error) throw content;
      return content;
    },
    readPath: async () => path,
  };
}

const OURS: Features = { notice: 1, repaint: 1, 'image-staged': 1, 'stage-only': 1 };
const key = (raw = Buffer.from([0x16])) => ({ type: 'paste-key' as const, source: 'c0' as const, raw });

test('Ctrl+V with an image: one AttachControl ClipboardImage, held keys after, a staged notice', async () => {
  const s = new FakeSession(OURS);
  const f = installPasteFeature(s, { reader: reader({ kind: 'image', bytes: png, mimeType: 'image/png', offered: ['image/png'] }) });
  assert.equal(s.hooks.get('pasteKey')!(key() as never), true);
  s.type('abc');
  await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste'); // queued behind the key's paste
  assert.equal(s.sent[0]?.type, 'AttachControl');
  const body = s.sent[0]?.type === 'AttachControl' ? s.sent[0].body : null;
  assert.equal(body?.kind, 'ClipboardImage');
  assert.equal(Buffer.concat(s.program).toString(), 'abc', 'no 0x16, the held keys after');
  assert.match(s.notices[0]!.text, /^Image staged: \/run\/clipboard\/x\.png \(/);
});

test('Ctrl+V without an image: the raw key reaches the program before the held keys, silently', async () => {
  const s = new FakeSession(OURS);
  const f = installPasteFeature(s, { reader: reader(null) });
  const raw = Buffer.from('\x1b[118;5u');
  s.hooks.get('pasteKey')!(key(raw) as never);
  s.type('x');
  while (s.held !== null) await new Promise((r) => setImmediate(r));
  assert.equal(Buffer.concat(s.program).toString('latin1'), '\x1b[118;5ux');
  await f.trigger({ kind: 'key', raw: Buffer.from([0x16]) }, 'paste');
  assert.equal(Buffer.concat(s.program).toString('latin1'), '\x1b[118;5ux\x16');
  assert.equal(s.sent.length, 0);
  assert.deepEqual(s.notices, []);
});

test('empty bracketed paste and palette without an image: a notice', async () => {
  const s = new FakeSession(OURS);
  const f = installPasteFeature(s, { reader: reader(null) });
  await f.trigger({ kind: 'empty-paste', raw: Buffer.from('\x1b[200~\x1b[201~') }, 'paste');
  await f.trigger({ kind: 'action', source: 'clipboard' }, 'stage-only');
  assert.equal(s.notices.length, 2);
  assert.match(s.notices[1]!.text, /no image on the host clipboard/);
  // Both were asked for: both are in the host's record; a Ctrl+V that simply passes through is not.
  assert.deepEqual(s.log, [
    { action: 'paste-image', target: 'clipboard', result: 'failed', detail: 'no image on the host clipboard' },
    { action: 'paste-image', target: 'clipboard', result: 'failed', detail: 'no image on the host clipboard' },
  ]);
  await f.trigger({ kind: 'key', raw: Buffer.from([0x16]) }, 'paste');
  assert.equal(s.log.length, 2);
});

test('stage-only sends StageOnly first only when negotiated; upstream gets only upstream frames', async () => {
  const img = { kind: 'image' as const, bytes: png, mimeType: 'image/png', offered: [] };
  const ours = new FakeSession(OURS);
  await installPasteFeature(ours, { reader: reader(img) }).trigger({ kind: 'action', source: 'clipboard' }, 'stage-only');
  assert.deepEqual(ours.sent.map((f) => f.type), ['StageOnly', 'AttachControl']);

  const up = new FakeSession(null);
  up.answer = (id) => [{ type: 'AttachControlResponse', requestId: id, result: 'success' }];
  const feature = installPasteFeature(up, { reader: reader(img) });
  up.allowUpstream = true;
  up.gesture('palette-key'); // the upstream capsule's palette runs in the container
  up.emitFrame({ type: 'HostStageImageFromClipboard' });
  await feature.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
  assert.deepEqual(up.sent.map((f) => f.type), ['AttachControl', 'AttachControl']);
  assert.match(up.notices[0]!.text, /Image sent to the capsule/);
});

test('failures are told: backend missing (with the install hint), too large, unsupported', async () => {
  for (const [code, msg] of [
    ['E_CLIPBOARD_BACKEND_MISSING', 'clipboard helper "xclip" is not installed; install it: apt-get install xclip'],
    ['E_IMAGE_TOO_LARGE', 'image of 70000000 bytes exceeds the cap'],
    ['E_UNSUPPORTED_IMAGE', 'the clipboard offers only image/svg+xml'],
  ] as const) {
    const s = new FakeSession(OURS);
    const f = installPasteFeature(s, { reader: reader(new JackinError(code, msg)) });
    const out = await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
    assert.equal(out.kind === 'failed' && out.code, code);
    assert.equal(s.notices[0]?.level, 'error');
    assert.ok(s.notices[0]?.text.includes(msg));
    assert.equal(s.sent.length, 0);
    assert.deepEqual(s.log, [{ action: 'paste-image', target: 'clipboard', result: 'failed', detail: `${code}: ${msg}` }]);
  }
});

test('a rejected answer and a silent capsule end the paste and release the keys', async () => {
  const s = new FakeSession(null);
  s.answer = (id) => [{ type: 'AttachControlResponse', requestId: id, result: 'rejected' }];
  const image = reader({ kind: 'image', bytes: png, mimeType: 'image/png', offered: [] });
  // The default answer timeout: the rejection must win whatever the load on the machine.
  const f = installPasteFeature(s, { reader: image });
  assert.equal((await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste')).kind, 'rejected');
  f.dispose();
  assert.equal(s.actions.size + s.hooks.size, 0, 'disposing the feature removed its actions and hooks');
  const silent = installPasteFeature(s, { reader: image, responseTimeoutMs: 50 });
  s.answer = () => [];
  const p = silent.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
  s.type('k');
  assert.equal((await p).kind, 'timeout');
  assert.equal(Buffer.concat(s.program).toString(), 'k');
  assert.match(s.notices.at(-1)!.text, /did not answer/);
});

test('pasted paths: one real image path is staged; anything else passes byte for byte', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-paste-path-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'my shot.png'), png);
  writeFileSync(join(dir, 'notes.txt'), 'hello');
  const s = new FakeSession(OURS);
  const f = installPasteFeature(s, { reader: reader(null), env: {} });
  const scanner = new InputScanner();
  const paste = (text: string) => {
    const [ev] = scanner.push(Buffer.from(`\x1b[200~${text}\x1b[201~`));
    return ev!;
  };
  assert.equal(s.hooks.get('paste')!(paste(`'${dir}/my shot.png'\n`) as never), true);
  await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste'); // waits for the path's paste
  const staged = s.sent.find((fr) => fr.type === 'AttachControl');
  assert.ok(staged?.type === 'AttachControl' && staged.body.kind === 'ClipboardImage' && staged.body.bytes.equals(png));
  assert.equal(s.program.length, 0);

  for (const text of [`${dir}/notes.txt`, 'relative/a.png', `${dir}/my\\ shot.png ${dir}/my\\ shot.png`, `${dir}/missing.png`]) {
    const ev = paste(text);
    const claimed = s.hooks.get('paste')!(ev as never);
    if (claimed) await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
    else s.program.push(ev.type === 'paste' ? ev.raw : Buffer.alloc(0));
    assert.equal(s.program.pop()?.toString(), `\x1b[200~${text}\x1b[201~`);
  }
  assert.equal(s.sent.filter((fr) => fr.type === 'AttachControl').length, 1);
  assert.equal(pasteImagePathsEnabled({ JACKIN_PASTE_IMAGE_PATHS: 'Off' }), false);
  assert.equal(pasteImagePathsEnabled({}), true);
});

test('an image path (pasted or copied) whose symlink leads elsewhere is read only after the operator confirms its target', async (t) => {
  const { target, link } = plantSymlink(t, { target: 'passport.png', link: 'shot.png' }, png);
  const images = (s: FakeSession) => s.sent.filter((fr) => fr.type === 'AttachControl');

  // Pasted path, declined: no image is sent; the paste stays text, with a notice naming both paths.
  const declined = new FakeSession(OURS);
  declined.confirmAnswer = false;
  const f1 = installPasteFeature(declined, { reader: reader(null), env: {} });
  const scanner = new InputScanner();
  const [ev] = scanner.push(Buffer.from(`\x1b[200~${link}\x1b[201~`));
  assert.equal(declined.hooks.get('paste')!(ev as never), true);
  await f1.trigger({ kind: 'action', source: 'clipboard' }, 'paste'); // waits for the path's paste
  assert.deepEqual(declined.confirms, [{ kind: 'stage', target, label: link }]);
  assert.equal(images(declined).length, 0);
  assert.equal(declined.program.pop()?.toString(), `\x1b[200~${link}\x1b[201~`);
  assert.ok(declined.notices.some((n) => /shot\.png leads to .*passport\.png through a symlink/.test(n.text)), JSON.stringify(declined.notices));

  // A copied file (Ctrl+V), declined, then confirmed: the image goes only after the yes.
  const copied = new FakeSession(OURS);
  copied.confirmAnswer = false;
  const f2 = installPasteFeature(copied, { reader: reader({ kind: 'file', path: link, offered: [] }), env: {} });
  await f2.trigger({ kind: 'key', raw: Buffer.from([0x16]) }, 'paste');
  assert.equal(copied.confirms.length, 1);
  assert.equal(images(copied).length, 0);
  copied.confirmAnswer = true;
  await f2.trigger({ kind: 'key', raw: Buffer.from([0x16]) }, 'paste');
  assert.equal(copied.confirms.length, 2);
  const sent = images(copied)[0];
  assert.ok(sent?.type === 'AttachControl' && sent.body.kind === 'ClipboardImage' && sent.body.bytes.equals(png));
});

test('large images go Start / 1 MiB chunks / End with the SHA-256 of the whole', () => {
  const big = Buffer.alloc(2.5 * 1024 * 1024, 7);
  const frames = [...imageFrames(5n, 'png', big, { stageOnly: false, singleMax: 1024 })];
  const bodies = frames.map((f) => (f.type === 'AttachControl' ? f.body : null));
  assert.deepEqual(bodies.map((b) => b?.kind), ['ClipboardImageStart', 'ClipboardImageChunk', 'ClipboardImageChunk', 'ClipboardImageChunk', 'ClipboardImageEnd']);
  assert.deepEqual(bodies.slice(1, 4).map((b) => (b?.kind === 'ClipboardImageChunk' ? b.offset : -1)), [0, 1048576, 2097152]);
  const end = bodies[4];
  assert.ok(end?.kind === 'ClipboardImageEnd' && end.sha256.equals(createHash('sha256').update(big).digest()));
  assert.ok(frames.every((f) => f.type === 'AttachControl' && f.requestId === 5n && f.context.v === 1));
});

test('a capsule cannot make the host read the clipboard: no gesture, our capsule, or a second request per gesture', async () => {
  const img = { kind: 'image' as const, bytes: png, mimeType: 'image/png', offered: [] };
  let reads = 0;
  const counting: ClipboardReader = { ...reader(img), readImage: async () => (reads++, img) };

  // Refusals are decided synchronously, before any clipboard read could start.
  const up = new FakeSession(null);
  up.answer = (id) => [{ type: 'AttachControlResponse', requestId: id, result: 'success' }];
  installPasteFeature(up, { reader: counting });
  up.emitFrame({ type: 'HostPasteImageFromClipboard' });
  up.emitFrame({ type: 'HostStageImageFromClipboardPath' });
  assert.equal(reads, 0, 'no gesture: the clipboard was not read');
  assert.deepEqual(up.sent, []);
  assert.equal(up.notices.filter((n) => /Refused a request from the capsule/.test(n.text)).length, 2);
  // Not allowed (no --allow-upstream-requests): refused even right after a palette key.
  up.gesture('palette-key');
  up.emitFrame({ type: 'HostPasteImageFromClipboard' });
  assert.equal(up.notices.filter((n) => /Refused a request from the capsule/.test(n.text)).length, 3);
  assert.equal(reads, 0);
  up.allowUpstream = true;
  up.emitFrame({ type: 'HostPasteImageFromClipboard' });
  up.emitFrame({ type: 'HostPasteImageFromClipboard' });
  assert.equal(up.notices.filter((n) => /Refused a request from the capsule/.test(n.text)).length, 4, 'the second request on one gesture is refused');
  await pollUntil('the one allowed paste to be sent', () => up.sent.length === 1);
  assert.equal(reads, 1, 'one palette key, one clipboard read');

  const ours = new FakeSession(OURS);
  installPasteFeature(ours, { reader: counting });
  ours.gesture('palette-key');
  ours.emitFrame({ type: 'HostPasteImageFromClipboard' });
  assert.match(ours.notices[0]!.text, /Ignored a clipboard request from the capsule/);
  assert.deepEqual(ours.sent, []);
  assert.equal(reads, 1, 'our capsule never gets the clipboard by asking');
});
