// End-to-end: input transparency of `jackin run` in tmux (issue 3 acceptance: every byte, a 1 MiB paste).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureCommand, paneFor, startSession } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { shellQuote } from './helpers/tmux.ts';

/** The palette/detach key: typed twice, it reaches the program once. */
const PALETTE_KEY = 0x1c;
const MIB = 1024 * 1024;

function describeDifference(expected: Buffer, actual: Buffer): string {
  const firstDiff = expected.findIndex((b, i) => actual[i] !== b);
  const hex = (b: Buffer): string => b.toString('hex').replace(/(..)/g, '$1 ').trim();
  return (
    `expected ${expected.length} bytes, got ${actual.length}; first difference at ${firstDiff}:\n` +
    `  expected ${hex(expected.subarray(Math.max(0, firstDiff - 4), firstDiff + 12))}\n` +
    `  actual   ${hex(actual.subarray(Math.max(0, firstDiff - 4), firstDiff + 12))}`
  );
}

test('all 256 byte values typed through the session reach a raw-mode program unchanged', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'bytes');
  const out = join(pane.root, 'received.bin');
  await pane.typeLine(fixtureCommand('raw-recorder.mjs', out));
  await pane.waitForText('RAW-RECORDER-READY');

  const expected = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const typed: number[] = [];
  for (const b of expected) {
    typed.push(b);
    if (b === PALETTE_KEY) typed.push(b);
  }
  await pane.sendBytes(typed);
  let received = Buffer.alloc(0);
  try {
    await pollUntil('the recorder to receive 256 bytes', () => {
      received = readFileSync(out);
      return received.length >= expected.length;
    });
    // Bytes that arrive late would be a duplicated or extra byte: give them a moment to show up as a
    // mismatch by checking a marker typed after the payload lands after it.
    await pane.sendBytes([0x2e]);
    await pollUntil('the end marker', () => {
      received = readFileSync(out);
      return received.length >= expected.length + 1;
    });
  } catch {
    received = readFileSync(out);
  }
  const withMarker = Buffer.concat([expected, Buffer.from([0x2e])]);
  assert.ok(received.equals(withMarker), describeDifference(withMarker, received));
});

test('a 1 MiB paste of text lines reaches the program complete', async (t) => {
  const pane = await paneFor(t);
  await startSession(pane, 'paste');
  // Lines well under the 4095-byte canonical-mode line limit, all distinct so a lost or doubled block shows.
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < MIB; i++) {
    const line = `line ${String(i).padStart(6, '0')} ${'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2)}\n`;
    lines.push(line);
    size += line.length;
  }
  let text = lines.join('');
  text = `${text.slice(0, MIB - 1)}\n`;
  assert.equal(Buffer.byteLength(text), MIB);
  const source = join(pane.root, 'paste-source.txt');
  const target = join(pane.root, 'paste-target.txt');
  writeFileSync(source, text);

  // Echo off: the test is about input; 1 MiB of echo would only slow the pane down.
  await pane.typeLine(`stty -echo; cat > ${shellQuote(target)}; stty echo; echo "pasted-size=$(wc -c < ${shellQuote(target)})"`);
  await pollUntil('cat to create the target file', () => {
    try {
      return statSync(target).isFile();
    } catch {
      return false;
    }
  });
  await pane.pasteFile(source);
  // Ctrl+D at the start of a line ends cat; it travels behind the paste in the same byte stream.
  await pane.sendBytes([0x04]);
  const screen = await pane.waitForText(/^pasted-size=\d+$/m, { timeoutMs: 60_000 });
  assert.match(screen, new RegExp(`^pasted-size=${MIB}$`, 'm'));
  const got = readFileSync(target);
  assert.ok(got.equals(Buffer.from(text)), describeDifference(Buffer.from(text), got));
});
