import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '../../../test/helpers/poll.ts';
import { Session } from './session.ts';

/** Whether the process is asleep after reading input (`cat` then sleeps only in a write to the full PTY). */
function asleepAfterReading(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0];
    const read = Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'latin1'))?.[1]);
    return state === 'S' && read > 0;
  } catch {
    return false;
  }
}

test('session: output queued in the PTY after a long read is read on and passed on whole and in order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-read-on-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  for (let i = 0; i < 8192; i++) lines.push(randomBytes(57).toString('base64'));
  const file = join(dir, 'out.txt');
  writeFileSync(file, `${lines.join('\n')}\n`);

  const session = Session.spawn({ file: 'cat', args: [file] });
  t.after(() => session.dispose());
  const chunks: Buffer[] = [];
  session.setOutputSink((chunk) => chunks.push(Buffer.from(chunk)));
  // Held once output flows (a hold before the stream's first read is not applied), so `cat` fills the
  // kernel's buffers and blocks: the first read after the release finds far more than one read returns.
  await pollUntil('the first output', () => chunks.length > 0, { intervalMs: 1 });
  session.hold('test');
  await pollUntil('cat to block on the full PTY', () => asleepAfterReading(session.pid));
  // The reads set Error.stackTraceLimit to 0 while they run (see STACK_LIMIT_WRITABLE) and put it back.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 17;
  t.after(() => (Error.stackTraceLimit = limit));
  const beforeRelease = chunks.length;
  session.release('test');
  assert.equal(await session.exited, 0);
  assert.equal(Error.stackTraceLimit, 17, 'the stack trace limit was not restored');

  const output = Buffer.concat(chunks).toString('latin1');
  assert.equal(output, `${lines.join('\r\n')}\r\n`, 'output lost, duplicated or reordered');
  // One read of a PTY master returns at most 4 KiB, so reading on is what passes the output in longer
  // chunks (a read and up to READ_ON_BYTES more). The first read after the release finds the kernel's
  // buffers full, whatever the machine's load: its chunk is longer than one read. (How many of the later
  // reads find more waiting depends on how fast `cat` refills the PTY, so their count is not asserted.)
  const first = chunks[beforeRelease];
  assert.ok(first !== undefined, 'no output after the release');
  assert.ok(first.length > 4096, `the first chunk after the release is ${first.length} bytes: not read on`);
});
