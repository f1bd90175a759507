// End-to-end: kitty desktop notifications (issue 49), tmux as the operator's terminal. OSC 99 with
// metadata, what kitty-aware agents send, reaches the desktop notifier (a JACKIN_NOTIFIER=command: recorder):
// title and body from their `p=` chunks, joined by `i=` and `d=`; icons, buttons, actions and queries ignored.
// Before the fix every OSC 99 with metadata was dropped: the notifier got nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emitterCommand, paneFor, startSession } from './helpers/jackin-cli.ts';
import { commandNotifier } from './helpers/command-notifier.ts';
import { pollUntil } from './helpers/poll.ts';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

test("kitty notifications: OSC 99 with metadata, as kitty's specification shows it, reaches the notifier as title and body", async (t) => {
  const rec = commandNotifier(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'kitty-notify');
  const ST = '\\033\\\\';
  const sequences = [
    // The specification's title-and-body example: two chunks joined by i= and d=.
    `\\033]99;i=1:d=0;Hello world${ST}`,
    `\\033]99;i=1:d=1:p=body;This is cool${ST}`,
    // Base64 payloads (e=1), an icon and buttons (ignored), urgency and occasion (ignored), the title in two chunks.
    `\\033]99;i=build:d=0:e=1;${b64('Build ')}${ST}`,
    `\\033]99;i=build:d=0:p=icon;bm90IGFuIGljb24=${ST}`,
    `\\033]99;i=build:d=0:e=1;${b64('done')}${ST}`,
    `\\033]99;i=build:d=0:p=buttons;Retry\\342\\200\\250Ignore${ST}`,
    `\\033]99;i=build:d=1:p=body:e=1:u=2:o=always:a=-focus,report:c=1:w=5000;${b64('all green ✓')}${ST}`,
    // Queries and a close: never a reply, never a notification.
    `\\033]99;i=q:p=?;${ST}`,
    `\\033]99;i=q:p=alive;${ST}`,
    `\\033]99;i=1:p=close;${ST}`,
  ].join('');
  await pane.typeLine(emitterCommand(t, sequences));
  await pane.waitForText(/^emitted-done$/m);
  const calls = await pollUntil('two notifications at the notifier', () => rec.calls().length >= 2 && rec.calls(), { last: rec.calls });
  assert.deepEqual(calls, ['--from-jackin|--|Hello world|This is cool', '--from-jackin|--|Build done|all green ✓']);
  // Nothing more arrives once the program has printed again (a notification is handed over as its output passes).
  await pane.typeLine('echo after-$((4 + 4))');
  await pane.waitForText(/^after-8$/m);
  assert.equal(rec.calls().length, 2);
});

test('kitty notifications: a plain OSC 99 and a title-only one keep the instance as the title', async (t) => {
  const rec = commandNotifier(t);
  const pane = await paneFor(t, { env: rec.env });
  await startSession(pane, 'kitty-plain');
  const ST = '\\033\\\\';
  await pane.typeLine(emitterCommand(t, `\\033]99;;plain one${ST}\\033]99;i=7:d=1;titled only${ST}`));
  await pane.waitForText(/^emitted-done$/m);
  const calls = await pollUntil('two notifications at the notifier', () => rec.calls().length >= 2 && rec.calls(), { last: rec.calls });
  assert.deepEqual(calls, ['--from-jackin|--|kitty-plain|plain one', '--from-jackin|--|kitty-plain|titled only']);
});
