/**
 * `jackin export` and `jackin stage` interrupted by a signal midway (Ctrl+C, a supervisor's SIGTERM): the
 * built CLI against a real `jackin-capsule serve`, reached through an --exec relay that stops passing bytes
 * after the first few MiB, so the transfer is surely in flight when the signal comes. Nothing may be left
 * under a final name (nor a partial file), the exit status is 128 + the signal's number, stderr has one
 * line with the code, and the host's log records the transfer as cancelled.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startExportCapsule, type ExportCapsule } from './helpers/export-capsule.ts';
import { JACKIN_BIN } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { stagedFiles } from './helpers/staged-files.ts';
import { stallingRelay } from './helpers/stalling-relay.ts';

function scratchDir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'jackin-interrupt-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

function listAll(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Runs jackin with the capsule's environment until `inFlight` holds, then sends `sig`; returns how it ended. */
async function interrupt(t: TestContext, c: ExportCapsule, args: string[], inFlight: () => boolean, sig: NodeJS.Signals) {
  const child = spawn(process.execPath, [JACKIN_BIN, ...args], { env: c.env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((res) => child.once('close', (code) => res(code)));
  await pollUntil(`${args[0]} to be in flight`, inFlight, { timeoutMs: 20_000, last: () => stderr });
  child.kill(sig);
  return { status: await exited, stdout, stderr };
}

function lastLogRecord(c: ExportCapsule): Record<string, unknown> {
  const lines = readFileSync(join(c.home, 'log', 'actions.jsonl'), 'utf8')
    .trim()
    .split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

for (const [sig, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test(`jackin export interrupted by ${sig} midway: nothing under a final name, no partial file, exit status ${status}`, async (t) => {
    const c = await startExportCapsule(t, `export-${sig.toLowerCase()}`);
    writeFileSync(join(c.workspace, 'big.bin'), Buffer.alloc(32 * 1024 * 1024, 7));
    const dir = join(c.downloads, 'jackin', c.name);
    const relay = stallingRelay(scratchDir(t), c.socket);
    const r = await interrupt(
      t,
      c,
      ['export', '--from', c.name, '--exec', relay, 'big.bin'],
      () => listAll(dir).some((f) => f.includes('.jackin-partial-')),
      sig,
    );
    assert.equal(r.status, status, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'jackin: export big.bin: interrupted; nothing was saved (E_EXPORT_ABORTED)\n');
    assert.deepEqual(listAll(dir), [], 'neither the file nor its partial is left');
    assert.equal(lastLogRecord(c)['result'], 'cancelled');
  });

  test(`jackin stage interrupted by ${sig} midway: nothing under a final name, no partial file, exit status ${status}`, async (t) => {
    const c = await startExportCapsule(t, `stage-${sig.toLowerCase()}`);
    const src = scratchDir(t);
    const file = join(src, 'big.bin');
    writeFileSync(file, Buffer.alloc(32 * 1024 * 1024, 7));
    const relay = stallingRelay(src, c.socket);
    const r = await interrupt(t, c, ['stage', '--to', c.name, '--exec', relay, file], () => stagedFiles(c.runDir).some((f) => f.startsWith('.partial-')), sig);
    assert.equal(r.status, status, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `jackin: stage ${file}: interrupted; nothing was staged (E_STAGE_ABORTED)\n`);
    // The capsule removes its partial file when the connection goes.
    await pollUntil('the partial file to be removed', () => stagedFiles(c.runDir).length === 0, { timeoutMs: 20_000, last: () => stagedFiles(c.runDir) });
    assert.equal(lastLogRecord(c)['result'], 'cancelled');
  });
}
