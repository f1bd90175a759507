// The terminal as the clipboard (terminal-reader.ts) against a stand-in terminal that answers per the kitty
// clipboard protocol: detection, a chunked image, each error status, silence, and keys typed meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../../errors.ts';
import { NO_IMAGES_HELP, TerminalClipboardReader } from './terminal-reader.ts';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');
const packet = (meta: string, payload?: string): string => `\x1b]5522;${meta}${payload === undefined ? '' : `;${payload}`}\x1b\\`;

/**
 * A stand-in terminal: answers DECRQM 5522 with `ps` (or not at all), and a read with `answer(id)`, as reads
 * of the input the reader sees through its tap, split into pieces of `split` bytes. `typed` is what reached
 * the keyboard.
 */
function standIn(opts: { ps: number | null; answer?: (id: string, mimes: string) => string; osc52?: string; split?: number; keys?: string }) {
  const typed: Buffer[] = [];
  const asked: string[] = [];
  const reader: TerminalClipboardReader = new TerminalClipboardReader(
    {
      write: (bytes) => {
        const s = bytes.toString('latin1');
        asked.push(s);
        let reply = '';
        if (s === '\x1b[?5522$p') reply = opts.ps === null ? '' : `\x1b[?5522;${opts.ps}$y`;
        const m = /^\x1b\]5522;type=read:id=([^:;]+)[^;]*;([^\x1b]*)\x1b\\$/.exec(s);
        if (m !== null && opts.answer) reply = opts.answer(m[1]!, Buffer.from(m[2]!, 'base64').toString());
        if (s === '\x1b]52;c;?\x1b\\' && opts.osc52 !== undefined) reply = opts.osc52;
        if (reply === '') return;
        const all = Buffer.from((opts.keys ?? '') + reply + (opts.keys ?? ''), 'latin1');
        const n = opts.split ?? all.length;
        setImmediate(() => {
          for (let i = 0; i < all.length; i += n) typed.push(reader.take(all.subarray(i, i + n)));
        });
      },
    },
    'test',
    { timeoutMs: 2000, maxBytes: 1 << 20 },
    { detectTimeoutMs: 1000, firstReplyTimeoutMs: 2000 },
  );
  return { reader, typed: () => Buffer.concat([...typed, reader.take(Buffer.alloc(0))]).toString('latin1'), asked };
}

function png(n: number): Buffer {
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(n, 7)]);
}

function imageAnswer(data: Buffer, chunk = 4096) {
  return (id: string, mimes: string): string => {
    assert.equal(mimes, 'image/png');
    let s = packet(`type=read:status=OK:id=${id}`);
    for (let i = 0; i < data.length; i += chunk) s += packet(`type=read:status=DATA:mime=${b64('image/png')}:id=${id}`, b64(data.subarray(i, i + chunk)));
    return s + packet(`type=read:status=DONE:id=${id}`);
  };
}

test('terminal reader: detects 5522, reads image/png in chunks split anywhere; keys typed meanwhile pass, in order', async () => {
  const data = png(20_000);
  const t = standIn({ ps: 2, answer: imageAnswer(data), split: 7, keys: 'ab' });
  const got = await t.reader.readImage();
  assert.ok(got?.kind === 'image' && got.bytes.equals(data) && got.mimeType === 'image/png');
  // Around the DECRPM and around the answer: every key, in order, none of the terminal's bytes.
  assert.equal(t.typed(), 'abababab');
  assert.equal(t.asked[0], '\x1b[?5522$p');
  // Asked once: the second read goes straight to the request.
  await t.reader.readImage();
  assert.equal(t.asked.filter((a) => a === '\x1b[?5522$p').length, 1);
  assert.equal(t.reader.waiting, false);
});

test('terminal reader: no image of the type on the clipboard is no image', async () => {
  const t = standIn({ ps: 1, answer: (id) => packet(`type=read:status=OK:id=${id}`) + packet(`type=read:status=DONE:id=${id}`) });
  assert.equal(await t.reader.readImage(), null);
});

test('terminal reader: a terminal without 5522 (DECRPM 0, 4, or silence) cannot send images; said with what would', async () => {
  for (const ps of [0, 4, null]) {
    const t = standIn({ ps });
    await assert.rejects(t.reader.readImage(), (e) => hasCode(e, 'E_TERMINAL_NO_IMAGES') && (e as Error).message === NO_IMAGES_HELP);
  }
  assert.match(NO_IMAGES_HELP, /^your terminal cannot send images: .*kitty and Ghostty.*jackin stage FILE/);
});

test('terminal reader: each error reply is its own code; malformed and oversized answers too; silence times out', async () => {
  const cases: Array<[string, string]> = [
    ['EPERM', 'E_TERMINAL_CLIPBOARD_DENIED'],
    ['EBUSY', 'E_TERMINAL_CLIPBOARD_BUSY'],
    ['ENOSYS', 'E_TERMINAL_CLIPBOARD_UNAVAILABLE'],
    ['EIO', 'E_TERMINAL_CLIPBOARD_FAILED'],
    ['EWEIRD', 'E_TERMINAL_CLIPBOARD_FAILED'],
  ];
  for (const [status, code] of cases) {
    const t = standIn({ ps: 1, answer: (id) => packet(`type=read:status=${status}:id=${id}`) });
    await assert.rejects(t.reader.readImage(), (e) => hasCode(e, code as 'E_TERMINAL_CLIPBOARD_FAILED') && !(e as Error).message.includes('EWEIRD'));
  }
  const bad = standIn({
    ps: 1,
    answer: (id) => packet(`type=read:status=OK:id=${id}`) + packet(`type=read:status=DATA:mime=${b64('image/png')}:id=${id}`, '!!!'),
  });
  await assert.rejects(bad.reader.readImage(), (e) => hasCode(e, 'E_TERMINAL_CLIPBOARD_MALFORMED'));
  const big = standIn({ ps: 1, answer: imageAnswer(png(2 << 20)) });
  await assert.rejects(big.reader.readImage(), (e) => hasCode(e, 'E_IMAGE_TOO_LARGE'));
  const silent = standIn({ ps: 1 });
  await assert.rejects(silent.reader.readImage(), (e) => hasCode(e, 'E_CLIPBOARD_TIMEOUT'));
  assert.equal(silent.reader.waiting, false);
  // Once no read waits, the tap passes everything through as typed.
  assert.equal(silent.reader.take(Buffer.from('\x1b]5522;type=read:status=OK\x1b\\')).toString('latin1'), '\x1b]5522;type=read:status=OK\x1b\\');
});

test('terminal reader: an Escape key held as a possible answer goes back to the keyboard, after the answer or at the timeout', async () => {
  const answered = standIn({ ps: 1, answer: (id) => `${packet(`type=read:status=OK:id=${id}`)}${packet(`type=read:status=DONE:id=${id}`)}\x1b` });
  assert.equal(await answered.reader.readImage(), null);
  assert.equal(answered.typed(), '\x1b', 'the trailing Escape follows in the same read');

  const fed: string[] = [];
  const silent = standIn({ ps: 1 });
  silent.reader.attach((b) => fed.push(b.toString('latin1')));
  const read = silent.reader.readImage();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(silent.reader.take(Buffer.from('x\x1b')).toString('latin1'), 'x', 'a lone Escape may begin an answer: held');
  await assert.rejects(read, (e) => hasCode(e, 'E_CLIPBOARD_TIMEOUT'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fed, ['\x1b']);
});

test('terminal reader: without 5522, the text comes through OSC 52 (split anywhere, keys typed meanwhile pass); silence or a bad answer is none', async () => {
  const text = 'héllo from the laptop\n';
  const t = standIn({ ps: 0, osc52: `\x1b]52;c;${b64(text)}\x07`, split: 3, keys: 'k' });
  assert.equal(await t.reader.supported(), false);
  assert.equal(await t.reader.readText(), text);
  assert.equal(t.typed(), 'kkkk', 'the keys typed around both answers, and nothing of either');
  assert.deepEqual(t.asked.slice(-1), ['\x1b]52;c;?\x1b\\']);
  const silent = standIn({ ps: 0 });
  assert.equal(await silent.reader.readText(), null, 'a terminal that does not answer gives no text');
  for (const bad of ['\x1b]52;c;?\x1b\\', `\x1b]52;c;${b64(Buffer.from([0xff, 0xfe]))}\x1b\\`, '\x1b]52;c;not base64!\x1b\\']) {
    assert.equal(await standIn({ ps: 0, osc52: bad }).reader.readText(), null, JSON.stringify(bad));
  }
});
