import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { hasCode } from '../errors.ts';
import { copyCommand, copyOfferSequence, MAX_COPY_TEXT_BYTES } from './copy-command.ts';
import { TerminalFilter } from '../host/terminal/terminal-filter/filter.ts';
import type { FilterEvent } from '../host/terminal/terminal-filter/context.ts';

test('jackin-capsule copy: writes the OSC 52 offer the host filter turns into exactly that copy offer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-copy-cmd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const tty = join(dir, 'tty');
  for (const [words, stdin, text] of [
    [['hello', 'w\u00f6rld'], '', 'hello w\u00f6rld'],
    [[], 'from stdin\nline 2\n', 'from stdin\nline 2\n'],
  ] as const) {
    writeFileSync(tty, '');
    await copyCommand(words, Readable.from([Buffer.from(stdin)]), tty);
    const events: FilterEvent[] = [];
    new TerminalFilter({ onEvent: (e) => events.push(e) }).push(readFileSync(tty));
    assert.deepEqual(events, [{ type: 'copy-offer', text, bytes: Buffer.byteLength(text), removed: 0 }]);
  }
});

test('jackin-capsule copy: refuses text over 1 MiB or not UTF-8, and says so without a terminal', async () => {
  assert.throws(
    () => copyOfferSequence(Buffer.alloc(MAX_COPY_TEXT_BYTES + 1, 0x61)),
    (e) => hasCode(e, 'E_COPY_TOO_LARGE'),
  );
  assert.throws(
    () => copyOfferSequence(Buffer.from([0xff])),
    (e) => hasCode(e, 'E_COPY_NOT_UTF8'),
  );
  await assert.rejects(copyCommand([], Readable.from([Buffer.alloc(MAX_COPY_TEXT_BYTES + 1)])), (e) => hasCode(e, 'E_COPY_TOO_LARGE'));
  await assert.rejects(copyCommand(['x'], Readable.from([]), '/nonexistent/tty'), (e) => hasCode(e, 'E_NO_TTY'));
});
