import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plantSymlink } from '../../../test/helpers/planted-symlink.ts';
import { Emitter, toDisposable } from '../../disposable.ts';
import type { Features, ServerFrame } from '../../protocol/index.ts';
import { createPrimedReader } from '../platform/clipboard/primed-reader.ts';
import { FilePasteFeature, pasteFilePathsEnabled } from './file-paste-feature.ts';
import type { ConfirmRequest } from '../session/confirm-prompt.ts';
import type { InputEvent } from '../terminal/input-scan.ts';

/** The session surface the feature uses, recording what it sends and which hooks it added. */
class FakeSession {
  readonly sent: Buffer[] = [];
  readonly notices: string[] = [];
  readonly hooks: Array<[string, (ev: InputEvent) => boolean]> = [];
  readonly frames = new Emitter<ServerFrame>();
  readonly onFrame = this.frames.event;
  constructor(readonly features: Features | null) {}
  addInputHook(kind: string, hook: (ev: InputEvent) => boolean) {
    this.hooks.push([kind, hook]);
    return toDisposable(() => undefined);
  }
  holdInput() {
    return toDisposable(() => undefined);
  }
  notify(_level: string, text: string): void {
    this.notices.push(text);
  }
  sendInput(b: Buffer): void {
    this.sent.push(b);
  }
  readonly logged: Array<{ action: string; target: string; result: string }> = [];
  logAction(r: { action: string; target: string; result: 'ok' | 'refused' | 'failed' | 'cancelled' }): void {
    this.logged.push({ action: r.action, target: r.target, result: r.result });
  }
  /** Every confirmation asked for, and the operator's answer to the next ones. */
  readonly asked: ConfirmRequest[] = [];
  answer = false;
  confirm(request: ConfirmRequest): Promise<boolean> {
    this.asked.push(request);
    return Promise.resolve(this.answer);
  }
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), `timed out waiting for ${what}`);
}

function setup(env: NodeJS.ProcessEnv, features: Features | null) {
  const s = new FakeSession(features);
  let connects = 0;
  let triggers = 0;
  const feature = new FilePasteFeature(s, {
    env,
    connect: async () => {
      connects++;
      throw new Error('no capsule in this test');
    },
    images: { trigger: async () => (triggers++, { kind: 'passed-through' }) },
    clipboard: createPrimedReader(() => ({ name: 'none', reason: 'test', readImage: async () => null, readPath: async () => null })),
  });
  return { s, feature, connects: () => connects, triggers: () => triggers };
}

const paste = (text: string): InputEvent => ({ type: 'paste', content: Buffer.from(text), raw: Buffer.from(`\x1b[200~${text}\x1b[201~`) });

test('JACKIN_PASTE_FILE_PATHS: on unless 0/false/no/off in any case', () => {
  assert.equal(pasteFilePathsEnabled({}), true);
  for (const v of ['off', 'OFF', '0', 'false', 'no']) assert.equal(pasteFilePathsEnabled({ JACKIN_PASTE_FILE_PATHS: v }), false, v);
  assert.equal(pasteFilePathsEnabled({ JACKIN_PASTE_FILE_PATHS: 'on' }), true);
});

test('file paste: off, or a capsule without file-stage, lets every paste through to the image feature and opens nothing', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'a.txt');
  writeFileSync(file, 'a');
  for (const [env, features] of [
    [{ JACKIN_PASTE_FILE_PATHS: 'off' }, { 'file-stage': 1 }],
    [{}, { notice: 1 }],
    [{}, null],
  ] as const) {
    const { feature, connects, triggers, s } = setup(env, features);
    assert.equal(feature.onPaste(paste(file)), false);
    assert.equal(feature.onPasteKey({ type: 'paste-key', source: 'c0', raw: Buffer.from([0x16]) }), false);
    assert.equal(connects(), 0);
    assert.equal(triggers(), 0);
    assert.deepEqual(s.sent, []);
  }
});

test('file paste: hooks paste and paste key; a paste that is not only paths goes on, a paste of paths is claimed', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-file-paste-unit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { feature, s } = setup({}, { 'file-stage': 1 });
  assert.deepEqual(s.hooks.map(([k]) => k).sort(), ['paste', 'pasteKey']);
  assert.equal(feature.onPaste(paste('look at this')), false);
  writeFileSync(join(dir, 'a.txt'), 'a');
  assert.equal(feature.onPaste(paste(join(dir, 'a.txt'))), true);
});

test('file paste: a pasted symlink that leads elsewhere is read only after the operator confirms the file it leads to', async (t) => {
  const { workspace, target, link } = plantSymlink(t, { target: 'taxes.pdf', link: 'report.pdf' }, '%PDF private');
  const plain = join(workspace, 'plain.pdf');
  writeFileSync(plain, '%PDF plain');

  // Declined: nothing is read or sent to a capsule; the paste stays the host path, with a notice and a record.
  const declined = setup({}, { 'file-stage': 1 });
  assert.equal(declined.feature.onPaste(paste(link)), true);
  await until('the paste to go through', () => declined.s.sent.length > 0);
  assert.deepEqual(declined.s.asked, [{ kind: 'stage', target, label: link }]);
  assert.equal(declined.connects(), 0);
  assert.equal(Buffer.concat(declined.s.sent).toString(), `\x1b[200~${link}\x1b[201~`);
  assert.match(declined.s.notices.join('\n'), /Not staged, pasted as the host path: .*report\.pdf leads to .*taxes\.pdf through a symlink/);
  assert.deepEqual(declined.s.logged, [{ action: 'stage', target: link, result: 'refused' }]);

  // Confirmed: staging goes ahead (this fake has no capsule, so it fails there, after the question).
  const confirmed = setup({}, { 'file-stage': 1 });
  confirmed.s.answer = true;
  assert.equal(confirmed.feature.onPaste(paste(link)), true);
  await until('the paste to go through', () => confirmed.s.sent.length > 0);
  assert.equal(confirmed.s.asked.length, 1);
  assert.equal(confirmed.connects(), 1);

  // A file that is where its path says: no question.
  const direct = setup({}, { 'file-stage': 1 });
  assert.equal(direct.feature.onPaste(paste(plain)), true);
  await until('the paste to go through', () => direct.s.sent.length > 0);
  assert.deepEqual(direct.s.asked, []);
  assert.equal(direct.connects(), 1);
});
