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
import { imageFrames, installPasteFeature, pasteFilePathsEnabled, pasteImagePathsEnabled } from './paste-feature.ts';
import { InputScanner } from '../terminal/input-scan.ts';
import { TerminalClipboardReader } from '../platform/clipboard/terminal-reader.ts';

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
  s.programModes.bracketedPaste = true;
  await f.trigger({ kind: 'empty-paste' }, 'paste');
  assert.equal(Buffer.concat(s.program).toString(), '\x1b[200~\x1b[201~', 'the empty paste goes on, bracketed as the program asked');
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
  // A program that did not ask for bracketed paste gets an empty paste as what it is: nothing.
  s.programModes.bracketedPaste = false;
  s.program.length = 0;
  await f.trigger({ kind: 'empty-paste' }, 'paste');
  assert.deepEqual(s.program, []);
});

test('stage-only sends StageOnly first only when negotiated; upstream gets only upstream frames', async () => {
  const img = { kind: 'image' as const, bytes: png, mimeType: 'image/png', offered: [] };
  const ours = new FakeSession(OURS);
  await installPasteFeature(ours, { reader: reader(img) }).trigger({ kind: 'action', source: 'clipboard' }, 'stage-only');
  assert.deepEqual(
    ours.sent.map((f) => f.type),
    ['StageOnly', 'AttachControl'],
  );

  const up = new FakeSession(null);
  up.answer = (id) => [{ type: 'AttachControlResponse', requestId: id, result: 'success' }];
  const feature = installPasteFeature(up, { reader: reader(img) });
  up.allowUpstream = true;
  up.gesture('palette-key'); // the upstream capsule's palette runs in the container
  up.emitFrame({ type: 'HostStageImageFromClipboard' });
  await feature.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
  assert.deepEqual(
    up.sent.map((f) => f.type),
    ['AttachControl', 'AttachControl'],
  );
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
    // An image over the cap is refused (a check said no); the others failed.
    assert.deepEqual(s.log, [
      { action: 'paste-image', target: 'clipboard', result: code === 'E_IMAGE_TOO_LARGE' ? 'refused' : 'failed', detail: `${code}: ${msg}` },
    ]);
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
  s.programModes.bracketedPaste = true; // a shell at its prompt
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
  // A program that did not ask for bracketed paste gets a path that is not an image as plain typing.
  s.programModes.bracketedPaste = false;
  assert.equal(s.hooks.get('paste')!(paste(`${dir}/missing.png`) as never), true);
  await f.trigger({ kind: 'action', source: 'clipboard' }, 'paste');
  assert.equal(s.program.pop()?.toString(), `${dir}/missing.png`);
  assert.equal(pasteImagePathsEnabled({ JACKIN_PASTE_IMAGE_PATHS: 'Off' }), false);
  assert.equal(pasteImagePathsEnabled({}), true);
});

test('an image path (pasted or copied) whose symlink leads elsewhere is read only after the operator confirms its target', async (t) => {
  const { target, link } = plantSymlink(t, { target: 'passport.png', link: 'shot.png' }, png);
  const images = (s: FakeSession) => s.sent.filter((fr) => fr.type === 'AttachControl');

  // Pasted path, declined: no image is sent; the paste stays text, with a notice naming both paths.
  const declined = new FakeSession(OURS);
  declined.programModes.bracketedPaste = true;
  declined.confirmAnswer = false;
  const f1 = installPasteFeature(declined, { reader: reader(null), env: {} });
  const scanner = new InputScanner();
  const [ev] = scanner.push(Buffer.from(`\x1b[200~${link}\x1b[201~`));
  assert.equal(declined.hooks.get('paste')!(ev as never), true);
  await f1.trigger({ kind: 'action', source: 'clipboard' }, 'paste'); // waits for the path's paste
  assert.deepEqual(declined.confirms, [{ kind: 'stage', target, label: link }]);
  assert.equal(images(declined).length, 0);
  assert.equal(declined.program.pop()?.toString(), `\x1b[200~${link}\x1b[201~`);
  assert.ok(
    declined.notices.some((n) => /shot\.png leads to .*passport\.png through a symlink/.test(n.text)),
    JSON.stringify(declined.notices),
  );

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
  assert.deepEqual(
    bodies.map((b) => b?.kind),
    ['ClipboardImageStart', 'ClipboardImageChunk', 'ClipboardImageChunk', 'ClipboardImageChunk', 'ClipboardImageEnd'],
  );
  assert.deepEqual(
    bodies.slice(1, 4).map((b) => (b?.kind === 'ClipboardImageChunk' ? b.offset : -1)),
    [0, 1048576, 2097152],
  );
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

// --- host files: pasted paths, dropped files and copied file lists, staged when the capsule stages files ---

/** A paste affordance whose session stages files (the fake capsule refuses connections), counting reads. */
function filesSetup(o: { env?: NodeJS.ProcessEnv; features?: Features | null; clipboard?: ClipboardContent | null; connect?: boolean } = {}) {
  const s = new FakeSession(o.features === undefined ? { ...OURS, 'file-stage': 1 } : o.features);
  s.programModes.bracketedPaste = true;
  let connects = 0;
  let reads = 0;
  let holds = 0;
  const hold = s.holdInput.bind(s);
  s.holdInput = () => (holds++, hold());
  const clip = reader(o.clipboard ?? null);
  const f = installPasteFeature(s, {
    env: o.env ?? {},
    reader: { ...clip, readImage: () => (reads++, clip.readImage()) },
    ...(o.connect === false
      ? {}
      : {
          connect: async () => {
            connects++;
            throw new Error('no capsule in this test');
          },
        }),
  });
  const paste = (text: string): boolean => s.hooks.get('paste')!({ type: 'paste', content: Buffer.from(text), raw: Buffer.from(`\x1b[200~${text}\x1b[201~`) });
  const pasteKey = (): boolean => s.hooks.get('pasteKey')!({ type: 'paste-key', source: 'c0', raw: Buffer.from([0x16]) });
  /** Waits until every paste started so far has ended (the keys they held are released). */
  const settled = () => pollUntil('the pastes to end', () => s.held === null);
  return { s, f, paste, pasteKey, settled, connects: () => connects, reads: () => reads, holds: () => holds };
}

test('JACKIN_PASTE_FILE_PATHS: on unless 0/false/no/off in any case', () => {
  assert.equal(pasteFilePathsEnabled({}), true);
  for (const v of ['off', 'OFF', '0', 'false', 'no']) assert.equal(pasteFilePathsEnabled({ JACKIN_PASTE_FILE_PATHS: v }), false, v);
  assert.equal(pasteFilePathsEnabled({ JACKIN_PASTE_FILE_PATHS: 'on' }), true);
});

test('files are not staged when turned off, by a capsule without file-stage, or without connections: the paste goes through unchanged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'a');
  for (const o of [{ env: { JACKIN_PASTE_FILE_PATHS: 'off' } }, { features: { notice: 1 } }, { features: null }, { connect: false }] as const) {
    const { s, paste, pasteKey, settled, connects } = filesSetup({ ...o, clipboard: { kind: 'file', path: file, paths: [file], offered: [] } });
    // One path is tried as an image (it is text: the paste goes on as typed).
    assert.equal(paste(file), true);
    // A copied file list is tried as an image only (a text file: refused with a notice).
    assert.equal(pasteKey(), true);
    await settled();
    assert.equal(connects(), 0, JSON.stringify(o));
    assert.equal(Buffer.concat(s.program).toString(), `\x1b[200~${file}\x1b[201~`);
    assert.match(s.notices.map((n) => n.text).join('\n'), /Image not pasted: unsupported image/);
  }
});

test('file paste: a paste that is not only paths goes on; a paste of paths is claimed and staged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { s, paste, settled, connects } = filesSetup();
  assert.deepEqual([...s.hooks.keys()].sort(), ['paste', 'pasteKey']);
  assert.equal(paste('look at this'), false);
  writeFileSync(join(dir, 'a.txt'), 'a');
  writeFileSync(join(dir, 'b c.txt'), 'b');
  assert.equal(paste(`${join(dir, 'a.txt')} '${join(dir, 'b c.txt')}'\n`), true);
  await settled();
  assert.equal(connects(), 2, 'each file staged on a connection of its own');
  // This capsule refuses the connections: the host paths are pasted, quoted as they were, without the Enter.
  assert.equal(Buffer.concat(s.program).toString(), `\x1b[200~${join(dir, 'a.txt')} '${join(dir, 'b c.txt')}'\x1b[201~`);
  assert.equal(s.log.filter((r) => r.action === 'stage' && r.result === 'failed').length, 2);
  // A paste naming a file that does not exist is text, left alone.
  s.program.length = 0;
  assert.equal(paste(`${join(dir, 'a.txt')} ${join(dir, 'gone.txt')}`), true);
  await settled();
  assert.equal(Buffer.concat(s.program).toString(), `\x1b[200~${join(dir, 'a.txt')} ${join(dir, 'gone.txt')}\x1b[201~`);
  assert.equal(connects(), 2);
});

test('file paste: what is typed is bracketed only when the program asked for bracketed paste', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, 'a.txt');
  writeFileSync(a, 'a');
  const { s, paste, pasteKey, settled } = filesSetup({ clipboard: { kind: 'file', path: a, paths: [a, a], offered: [] } });
  s.programModes.bracketedPaste = false;
  assert.equal(paste(`'${a}'`), true);
  await settled();
  assert.equal(Buffer.concat(s.program).toString(), `'${a}'`);
  s.program.length = 0;
  s.programModes.bracketedPaste = true;
  assert.equal(pasteKey(), true);
  await settled();
  assert.equal(Buffer.concat(s.program).toString(), `\x1b[200~${a} ${a}\x1b[201~`);
});

test('Ctrl+V over copied files: the clipboard is read once, input held once, the files staged and their paths typed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, 'my notes.txt');
  const b = join(dir, 'b.csv');
  writeFileSync(a, 'a');
  writeFileSync(b, 'b');
  const { s, pasteKey, settled, connects, reads, holds } = filesSetup({ clipboard: { kind: 'file', path: a, paths: [a, b], offered: [] } });
  assert.equal(pasteKey(), true);
  s.type('k');
  await settled();
  assert.equal(reads(), 1);
  assert.equal(holds(), 1);
  assert.equal(connects(), 2);
  assert.equal(Buffer.concat(s.program).toString(), `\x1b[200~${a.replace(/ /g, '\\ ')} ${b}\x1b[201~k`, 'the paths, then the held key; no Ctrl+V, no Enter');
  assert.deepEqual(s.sent, [], 'no image frames');

  // A copied file that is gone: nothing is typed, and the operator is told.
  rmSync(b);
  assert.equal(pasteKey(), true);
  await settled();
  assert.match(s.notices.at(-1)!.text, /Copied files not pasted: a copied file no longer exists/);
});

test('one image file, copied or pasted, goes as an image even when files are staged: read once, never staged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const shot = join(dir, 'shot.png');
  writeFileSync(shot, png);
  const copied = filesSetup({ clipboard: { kind: 'file', path: shot, paths: [shot], offered: [] } });
  assert.equal(copied.pasteKey(), true);
  await copied.settled();
  assert.equal(copied.reads(), 1);
  assert.equal(copied.connects(), 0);
  const body = copied.s.sent.find((fr) => fr.type === 'AttachControl');
  assert.ok(body?.type === 'AttachControl' && body.body.kind === 'ClipboardImage' && body.body.bytes.equals(png));

  const pasted = filesSetup();
  assert.equal(pasted.paste(`'${shot}'`), true);
  await pasted.settled();
  assert.equal(pasted.reads(), 0, 'a pasted path never reads the clipboard');
  assert.equal(pasted.connects(), 0);
  assert.equal(pasted.s.sent.filter((fr) => fr.type === 'AttachControl').length, 1);
  assert.deepEqual(pasted.s.program, []);

  // With image paths off, a pasted image file is a file like any other.
  const off = filesSetup({ env: { JACKIN_PASTE_IMAGE_PATHS: 'off' } });
  assert.equal(off.paste(shot), true);
  await off.settled();
  assert.equal(off.connects(), 1);
  assert.deepEqual(off.s.sent, []);
});

test('file paste: a pasted symlink that leads elsewhere is read only after the operator confirms the file it leads to', async (t) => {
  const { workspace, target, link } = plantSymlink(t, { target: 'taxes.pdf', link: 'report.pdf' }, '%PDF private');
  const plain = join(workspace, 'plain.pdf');
  writeFileSync(plain, '%PDF plain');

  // Declined: nothing is read or sent to a capsule; the paste stays the host path, with a notice and a record.
  const declined = filesSetup();
  declined.s.confirmAnswer = false;
  assert.equal(declined.paste(link), true);
  await declined.settled();
  assert.deepEqual(declined.s.confirms, [{ kind: 'stage', target, label: link }]);
  assert.equal(declined.connects(), 0);
  assert.equal(Buffer.concat(declined.s.program).toString(), `\x1b[200~${link}\x1b[201~`);
  assert.match(declined.s.notices.map((n) => n.text).join('\n'), /Not staged, pasted as the host path: .*report\.pdf leads to .*taxes\.pdf through a symlink/);
  assert.deepEqual(
    declined.s.log.map((r) => ({ action: r.action, target: r.target, result: r.result })),
    [{ action: 'stage', target: link, result: 'refused' }],
  );

  // Confirmed: staging goes ahead (this fake has no capsule, so it fails there, after the question).
  const confirmed = filesSetup();
  assert.equal(confirmed.paste(link), true);
  await confirmed.settled();
  assert.equal(confirmed.s.confirms.length, 1);
  assert.equal(confirmed.connects(), 1);

  // A file that is where its path says: no question.
  const direct = filesSetup();
  assert.equal(direct.paste(plain), true);
  await direct.settled();
  assert.deepEqual(direct.s.confirms, []);
  assert.equal(direct.connects(), 1);
});

/** A stand-in terminal behind the fake session: answers 5522 questions through the session's input taps. */
function terminalClipboard(s: FakeSession, answer: (id: string, meta: string) => string) {
  const asked: string[] = [];
  const push = (text: string): void => {
    let rest: Buffer = Buffer.from(text, 'latin1');
    for (const tap of s.inputTaps) rest = tap.take(rest);
    // What the taps leave is typing; the scanner finds whole packets when no read is out.
    for (const ev of new InputScanner().push(rest)) {
      if (ev.type === 'reply' && ev.kind === 'kitty-clipboard') for (const tap of s.inputTaps) tap.reply(ev.raw.subarray(2, -2));
    }
  };
  const reader = new TerminalClipboardReader(
    {
      write: (bytes) => {
        const q = bytes.toString('latin1');
        asked.push(q);
        if (q === '\x1b[?5522$p') setImmediate(() => push('\x1b[?5522;2$y'));
        const m = /^\x1b\]5522;(type=read:id=([^:;]+)[^;]*);/.exec(q);
        if (m !== null) setImmediate(() => push(answer(m[2]!, m[1]!)));
      },
    },
    'test',
    { timeoutMs: 2000, maxBytes: 1 << 20 },
  );
  return { reader, asked, push };
}

const pkt = (meta: string, payload?: string): string => `\x1b]5522;${meta}${payload === undefined ? '' : `;${payload}`}\x1b\\`;
const pngAnswer = (id: string): string =>
  pkt(`type=read:status=OK:id=${id}`) +
  pkt(`type=read:status=DATA:mime=${Buffer.from('image/png').toString('base64')}:id=${id}`, png.toString('base64')) +
  pkt(`type=read:status=DONE:id=${id}`);

test('terminal clipboard: Ctrl+V reads the PNG from the operator terminal and sends it as a clipboard image; EPERM is a notice with its code', async () => {
  const s = new FakeSession(OURS);
  const t = terminalClipboard(s, pngAnswer);
  const f = installPasteFeature(s, { reader: t.reader });
  const out = await f.trigger({ kind: 'key', raw: Buffer.from([0x16]) }, 'paste');
  assert.equal(out.kind, 'staged');
  const body = s.sent[0]?.type === 'AttachControl' ? s.sent[0].body : null;
  assert.ok(body?.kind === 'ClipboardImage' && body.bytes.equals(png));
  assert.deepEqual(s.program, [], 'no 0x16 and none of the terminal bytes reach the program');

  const denied = new FakeSession(OURS);
  const d = terminalClipboard(denied, (id) => pkt(`type=read:status=EPERM:id=${id}`));
  const got = await installPasteFeature(denied, { reader: d.reader }).trigger({ kind: 'action', source: 'clipboard' }, 'paste');
  assert.deepEqual([got.kind, got.kind === 'failed' ? got.code : null], ['failed', 'E_TERMINAL_CLIPBOARD_DENIED']);
  assert.match(denied.notices[0]!.text, /^Image not pasted: your terminal refused to share its clipboard \(EPERM\)/);
  assert.equal(denied.sent.length, 0);
});

test('terminal clipboard: paste events go on after Welcome when the terminal speaks 5522; a paste event with an image reads it with its password', async () => {
  const s = new FakeSession(OURS);
  const t = terminalClipboard(s, pngAnswer);
  const f = installPasteFeature(s, { reader: t.reader });
  s.welcome();
  await pollUntil('paste events on', () => s.hostNeeds.length > 0);
  assert.deepEqual(s.hostNeeds, [{ pasteEvents: true }]);
  const pw = Buffer.from('one-use').toString('base64');
  t.push(
    pkt(`type=read:status=OK:pw=${pw}`) +
      pkt(`type=read:status=DATA:mime=${Buffer.from('.').toString('base64')}`, Buffer.from('text/plain image/png').toString('base64')) +
      pkt('type=read:status=DONE'),
  );
  await pollUntil('the image sent', () => s.sent.length > 0);
  assert.match(t.asked.at(-1)!, new RegExp(`^\\x1b\\]5522;type=read:id=[^:]+:pw=${pw}:name=`));
  await pollUntil('the staged notice', () => s.notices.length > 0);
  f.dispose();
  assert.deepEqual(s.hostNeeds.at(-1), { pasteEvents: false });
});

test('terminal clipboard: a malformed packet from the terminal is dropped with one notice, never typed', async () => {
  const s = new FakeSession(OURS);
  const t = terminalClipboard(s, pngAnswer);
  installPasteFeature(s, { reader: t.reader });
  t.push(pkt('type=read:status=OK', 'not base64!'));
  t.push(pkt('type=read:status=OK', 'still not!'));
  assert.equal(s.notices.length, 1);
  assert.match(s.notices[0]!.text, /^Dropped a clipboard packet not of the OSC 5522 form from your terminal \(E_TERMINAL_CLIPBOARD_MALFORMED\)/);
  assert.deepEqual(s.program, []);
  assert.equal(s.sent.length, 0);
});
