/**
 * `jackin stage` end to end: the built CLI against a real `jackin-capsule serve` (real Unix socket, real
 * attach-proxy relay), checking the staged bytes, modes and names on disk, the refusals with their codes,
 * the caps, and that a transfer killed midway leaves nothing under a final name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startExportCapsule } from './helpers/export-capsule.ts';
import { CAPSULE_BIN, JACKIN_BIN, runJackin } from './helpers/jackin-cli.ts';
import { shellQuote } from './helpers/tmux.ts';
import { pollUntil } from './helpers/poll.ts';
import { stagedFiles } from './helpers/staged-files.ts';
import { stallingRelay } from './helpers/stalling-relay.ts';
import {
  capForTag,
  createStageServerDecoder,
  encodeControlMessage,
  encodeStageClientFrame,
  FILE_STAGE_TAGS,
  type StageServerFrame,
} from '../src/protocol/index.ts';
import { ReplyReader } from '../src/transport/control-call.ts';
import { connectSocket } from '../src/transport/socket.ts';
import { testDir } from './helpers/test-run.ts';

function hostDir(t: { after: (fn: () => void) => void }): string {
  return testDir(t, 'jackin-stage-src-');
}

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('jackin stage over the socket: files land at <run>/files/<random>/<name>, 0600 in 0700, same bytes, JSON per path', async (t) => {
  const c = await startExportCapsule(t, 'stage-sock-i17');
  const src = hostDir(t);
  const a = join(src, 'my report\'s "final".pdf');
  const b = join(src, 'data.csv');
  const bytesA = Buffer.from('%PDF-1.4 not really\n'.repeat(1000));
  const bytesB = Buffer.alloc(3 * 1024 * 1024 + 7, 0x61);
  writeFileSync(a, bytesA);
  writeFileSync(b, bytesB);
  const link = join(src, 'latest.csv');
  symlinkSync(b, link);
  const r = await c.jackin(['stage', '--to', c.name, '--json', a, b, link]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonLines(r.stdout);
  assert.equal(lines.length, 3);
  for (const [line, source, bytes, name] of [
    [lines[0], a, bytesA, 'my report\'s "final".pdf'],
    [lines[1], b, bytesB, 'data.csv'],
    [lines[2], link, bytesB, 'latest.csv'],
  ] as const) {
    assert.equal(line!['ok'], true);
    assert.equal(line!['source'], source);
    assert.equal(line!['bytes'], bytes.length);
    assert.equal(line!['sha256'], sha(bytes));
    const dest = String(line!['destination']);
    assert.match(dest, new RegExp(`^${c.runDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/files/[0-9a-f]{16}/`));
    assert.equal(dest.split('/').at(-1), name);
    assert.deepEqual(readFileSync(dest), bytes);
    assert.equal(statSync(dest).mode & 0o777, 0o600);
    assert.equal(statSync(join(dest, '..')).mode & 0o777, 0o700);
  }
  assert.equal(statSync(join(c.runDir, 'files')).mode & 0o777, 0o700);
  // Each staged file has a line in the host's own action log (outside the run directory the container sees).
  const log = readFileSync(join(c.home, 'log', 'actions.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    log.map((e) => [e['instance'], e['action'], e['target'], e['result']]),
    [a, b, link].map((p) => [c.name, 'stage', p, 'ok']),
  );
  // The plain output is the container path first, and says what a symlink led to.
  const plain = await c.jackin(['stage', '--to', c.name, link]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /\/files\/[0-9a-f]{16}\/latest\.csv {2}\(\d+ bytes, sha256 [0-9a-f]{64}\) \(symlink to /);
});

test('jackin stage refuses secrets, directories, missing files and files over the caps, with codes, and stages nothing for them', async (t) => {
  const c = await startExportCapsule(t, 'stage-refuse-i17');
  const src = hostDir(t);
  mkdirSync(join(src, '.ssh'));
  writeFileSync(join(src, '.ssh', 'config'), 'Host x\n');
  writeFileSync(join(src, '.env'), 'TOKEN=1\n');
  writeFileSync(join(src, 'server.pem'), 'key\n');
  symlinkSync(join(src, '.ssh', 'config'), join(src, 'innocent.txt'));
  mkdirSync(join(src, 'dir'));
  writeFileSync(join(src, 'big.bin'), Buffer.alloc(5000));
  writeFileSync(join(src, 'ok.txt'), 'fine\n');
  const r = await c.jackin([
    'stage',
    '--to',
    c.name,
    '--json',
    join(src, '.ssh', 'config'),
    join(src, '.env'),
    join(src, 'server.pem'),
    join(src, 'innocent.txt'),
    join(src, 'dir'),
    join(src, 'nope'),
    join(src, 'ok.txt'),
  ]);
  assert.equal(r.code, 1);
  const codes = jsonLines(r.stdout).map((l) => (l['ok'] === true ? 'ok' : l['code']));
  assert.deepEqual(codes, ['E_SECRET_PATH', 'E_SECRET_PATH', 'E_SECRET_PATH', 'E_SECRET_PATH', 'E_STAGE_DIRECTORY', 'E_PATH_NOT_FOUND', 'ok']);
  assert.equal(stagedFiles(c.runDir).length, 1);

  // The cap: per file, and for the whole command.
  const env = { JACKIN_STAGE_MAX_BYTES: '4096' };
  const one = await runJackin(['stage', '--to', c.name, '--json', join(src, 'big.bin')], { ...c.env, ...env });
  assert.equal(one.code, 1);
  assert.equal(jsonLines(one.stdout)[0]!['code'], 'E_STAGE_TOO_LARGE');
  writeFileSync(join(src, 'half1'), Buffer.alloc(3000));
  writeFileSync(join(src, 'half2'), Buffer.alloc(3000));
  const both = await runJackin(['stage', '--to', c.name, '--json', join(src, 'half1'), join(src, 'half2')], { ...c.env, ...env });
  assert.equal(both.code, 1);
  assert.deepEqual(
    jsonLines(both.stdout).map((l) => l['code']),
    ['E_STAGE_TOO_LARGE', 'E_STAGE_TOO_LARGE'],
  );
  const bad = await runJackin(['stage', '--to', c.name, join(src, 'ok.txt')], { ...c.env, JACKIN_STAGE_MAX_BYTES: 'lots' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /E_BAD_STAGE_MAX_BYTES|JACKIN_STAGE_MAX_BYTES/);
  assert.equal(stagedFiles(c.runDir).length, 1);
});

test('jackin stage over an exec relay (attach-proxy) stages the same bytes', async (t) => {
  const c = await startExportCapsule(t, 'stage-relay-i17');
  const src = hostDir(t);
  const file = join(src, 'relayed file.log');
  const bytes = Buffer.alloc(2 * 1024 * 1024 + 3, 0x42);
  writeFileSync(file, bytes);
  const relay = [process.execPath, CAPSULE_BIN, 'attach-proxy', '--socket', c.socket].map(shellQuote).join(' ');
  const r = await c.jackin(['stage', '--to', c.name, '--exec', relay, '--json', file]);
  assert.equal(r.code, 0, r.stderr);
  const [line] = jsonLines(r.stdout);
  assert.equal(line!['ok'], true);
  assert.equal(line!['sha256'], sha(bytes));
  assert.deepEqual(readFileSync(String(line!['destination'])), bytes);
});

test('a stage killed midway leaves nothing under a final name, and the partial file goes when the connection does', async (t) => {
  const c = await startExportCapsule(t, 'stage-kill-i17');
  const src = hostDir(t);
  const file = join(src, 'huge.bin');
  writeFileSync(file, Buffer.alloc(32 * 1024 * 1024, 1));
  // A relay that passes the request and the first 4 MiB, then stops reading: the transfer stalls midway.
  const relay = stallingRelay(src, c.socket);
  const child = spawn(process.execPath, [JACKIN_BIN, 'stage', '--to', c.name, '--exec', relay, file], { env: c.env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await pollUntil('a partial file in <run>/files', () => stagedFiles(c.runDir).some((f) => f.startsWith('.partial-')), { timeoutMs: 20_000 });
  // Midway: the bytes so far are only under the partial name.
  assert.ok(
    stagedFiles(c.runDir).every((f) => f.startsWith('.partial-')),
    stagedFiles(c.runDir).join(', '),
  );
  child.kill('SIGKILL');
  await pollUntil('the partial file to be removed', () => stagedFiles(c.runDir).length === 0, {
    timeoutMs: 20_000,
    last: () => stagedFiles(c.runDir).join(', '),
  });
  assert.deepEqual(stagedFiles(c.runDir), []);
});

test('staged files are removed when the capsule exits', async (t) => {
  const c = await startExportCapsule(t, 'stage-exit-i17');
  const src = hostDir(t);
  const file = join(src, 'gone soon.txt');
  writeFileSync(file, 'bye\n');
  const r = await c.jackin(['stage', '--to', c.name, '--json', file]);
  assert.equal(r.code, 0, r.stderr);
  const dest = String(jsonLines(r.stdout)[0]!['destination']);
  assert.equal(readFileSync(dest, 'utf8'), 'bye\n');
  const exited = new Promise((resolve) => c.child.once('exit', resolve));
  c.child.kill('SIGTERM');
  await exited;
  assert.equal(existsSync(join(c.runDir, 'files')), false);
});

/** Speaks the stage protocol by hand: the request, then `frames` once the reply came; returns the reply and the capsule's frames. */
async function rawStage(
  socketPath: string,
  request: object,
  frames: (transferId: bigint) => Buffer[],
): Promise<{ reply: Record<string, unknown>; answers: StageServerFrame[] }> {
  const sock = await connectSocket(socketPath);
  try {
    sock.write(encodeControlMessage(request));
    const reader = new ReplyReader();
    const decoder = createStageServerDecoder();
    let reply: Record<string, unknown> | undefined;
    const answers: StageServerFrame[] = [];
    for await (const raw of sock as AsyncIterable<Buffer>) {
      let chunk = raw;
      if (reply === undefined) {
        const got = reader.push(chunk);
        if (got === undefined) continue;
        reply = got.value as Record<string, unknown>;
        if (reply['ok'] !== true) return { reply, answers };
        for (const f of frames(BigInt(String(reply['transferId'])))) sock.write(f);
        chunk = got.rest;
      }
      for (const item of decoder.push(chunk)) if (item.ok) answers.push(item.frame);
    }
    return { reply: reply ?? {}, answers };
  } finally {
    sock.destroy();
  }
}

test('a hostile host on the stage connection: wrong digest, offset, transfer id, name or a malformed frame is refused with its code, nothing published', async (t) => {
  const c = await startExportCapsule(t, 'stage-hostile-i17');
  const data = Buffer.from('0123456789');
  const chunk = (id: bigint, offset: number, bytes: Buffer): Buffer => encodeStageClientFrame({ type: 'FileStageChunk', transferId: id, offset, bytes });
  const frameHeader = (tag: number, length: number): Buffer => {
    const h = Buffer.alloc(5);
    h[0] = tag;
    h.writeUInt32BE(length, 1);
    return h;
  };
  const end = (id: bigint, d: Buffer): Buffer =>
    encodeStageClientFrame({ type: 'FileStageEnd', transferId: id, sha256: createHash('sha256').update(d).digest() });
  const cases: Array<[string, (id: bigint) => Buffer[]]> = [
    ['E_DIGEST_MISMATCH', (id) => [chunk(id, 0, data), end(id, Buffer.from('other'))]],
    ['E_TRANSFER_OFFSET', (id) => [chunk(id, 5, data)]],
    ['E_TRANSFER_CORRELATION', (id) => [chunk(id + 1n, 0, data)]],
    ['E_TRANSFER_SIZE_MISMATCH', (id) => [chunk(id, 0, Buffer.concat([data, data]))]],
    ['E_TRANSFER_SIZE_MISMATCH', (id) => [chunk(id, 0, data.subarray(0, 3)), end(id, data.subarray(0, 3))]],
    // Malformed frames: a length over the chunk tag's cap (the stream is lost), and a tag the stage does not know.
    ['E_FRAME_TOO_LARGE', () => [frameHeader(FILE_STAGE_TAGS.FileStageChunk, capForTag(FILE_STAGE_TAGS.FileStageChunk) + 1)]],
    ['E_TRANSFER_PROTOCOL', () => [frameHeader(0x7e, 0)]],
  ];
  for (const [code, frames] of cases) {
    const { reply, answers } = await rawStage(c.socket, { method: 'stage', name: 'x.txt', size: data.length }, frames);
    assert.equal(reply['ok'], true, `${code}: ${JSON.stringify(reply)}`);
    assert.equal(answers.length, 1, code);
    const a = answers[0]!;
    assert.ok(a.type === 'Notice' && a.text.startsWith(`${code}: `), `${code}: ${JSON.stringify(a)}`);
  }
  for (const [name, code] of [
    ['../x', 'E_BAD_STAGE_NAME'],
    ['a\nb', 'E_BAD_STAGE_NAME'],
    ['.partial-00', 'E_BAD_STAGE_NAME'],
  ] as const) {
    const { reply } = await rawStage(c.socket, { method: 'stage', name, size: 1 }, () => []);
    assert.equal(reply['code'], code, name);
  }
  const tooBig = await rawStage(c.socket, { method: 'stage', name: 'a', size: 2 * 1024 ** 3 }, () => []);
  assert.equal(tooBig.reply['code'], 'E_STAGE_TOO_LARGE');
  await pollUntil('no partial file left', () => stagedFiles(c.runDir).length === 0, { last: () => stagedFiles(c.runDir).join(', ') });
  // And a good one on the same capsule still works.
  const ok = await rawStage(c.socket, { method: 'stage', name: 'x.txt', size: data.length }, (id) => [
    chunk(id, 0, data.subarray(0, 4)),
    chunk(id, 4, data.subarray(4)),
    end(id, data),
  ]);
  const staged = ok.answers[0];
  assert.ok(staged?.type === 'FileStaged' && staged.bytes === 10);
  assert.deepEqual(readFileSync(staged.path), data);
});
