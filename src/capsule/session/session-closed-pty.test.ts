/**
 * Once node-pty has closed the PTY's master (it destroys its tty stream: EIO after the program's exit, its
 * timer 200 ms after the exit, destroy()), the descriptor's number is free and the next file this process
 * opens gets it. The session must then neither read that file as the program's output nor write keystrokes
 * into it (PtyInternals.openFd). Seen once in CI: a capsule's own read of /proc/net/tcp reached the operator's
 * terminal as the program's last output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadStream } from 'node:tty';
import { Session } from './session.ts';

type ActiveHandle = { _handle?: { fd?: number } | null; destroy?: () => void };

/** node-pty's tty streams on a PTY master, by descriptor (found among the process's active handles). */
function ptyStreams(): Map<number, ReadStream> {
  const handles = (process as unknown as { _getActiveHandles(): ActiveHandle[] })._getActiveHandles();
  const out = new Map<number, ReadStream>();
  for (const h of handles) {
    const fd = h._handle?.fd;
    if (!(h instanceof ReadStream) || typeof fd !== 'number' || fd < 0) continue;
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === '/dev/ptmx') out.set(fd, h);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Opens `path` until the descriptor it gets is `fd` (the lowest free number is handed out first). */
function openAs(path: string, fd: number): number {
  const others: number[] = [];
  try {
    for (let i = 0; i < 256; i++) {
      const got = openSync(path, 'r+');
      if (got === fd) return got;
      others.push(got);
    }
    throw new Error(`descriptor ${fd} was not handed out again`);
  } finally {
    for (const o of others) closeSync(o);
  }
}

test('session: after node-pty closed the PTY, a file that took its descriptor is neither read as output nor written with input', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-closed-pty-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const before = new Set(ptyStreams().keys());
  const session = Session.spawn({ file: 'sleep', args: ['30'] });
  t.after(() => session.dispose());
  const output: Buffer[] = [];
  session.setOutputSink((chunk) => output.push(Buffer.from(chunk)));
  const mine = [...ptyStreams()].filter(([fd]) => !before.has(fd));
  assert.equal(mine.length, 1, 'the session has one PTY stream');
  const [masterFd, stream] = mine[0]!;

  // What node-pty does when it gives up the PTY: destroying its stream closes the master.
  stream.destroy();
  const file = join(dir, 'private.txt');
  const secret = 'private contents of another file\n'.repeat(200);
  writeFileSync(file, secret);
  const reused = openAs(file, masterFd);
  t.after(() => closeSync(reused));

  // Input while the program still runs (its exit not yet reported) goes nowhere.
  session.write(Buffer.from('typed keys\r'));
  // The program's exit makes the session read the master to its end (the exit hook's drain).
  session.kill('SIGKILL');
  await session.exited;

  assert.equal(readFileSync(file, 'utf8'), secret, 'input was written into the file that took the descriptor');
  const shown = Buffer.concat(output).toString('latin1');
  assert.ok(!shown.includes('private contents'), `the file that took the descriptor was read as output: ${JSON.stringify(shown.slice(0, 80))}`);
});
