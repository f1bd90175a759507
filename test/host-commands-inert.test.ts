/**
 * Every string from the container that a host command prints is made inert: a capsule (and a relay) that
 * answers with ESC, OSC 52, CSI and C1 in every field the host shows (`ls`, `doctor`, `export` errors and
 * its progress line, `--offered`, a Shutdown reason, a relay's stderr) never gets one of those bytes onto
 * the operator's terminal. The bytes written are checked, not the rendering.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { ControlMessageDecoder, createClientFrameDecoder, encodeControlMessage, encodeServerFrame } from '../src/protocol/index.ts';
import { readActions } from '../src/host/instances/action-log.ts';
import { JACKIN_BIN, runJackin, type JackinResult, CAPSULE_BIN } from './helpers/jackin-cli.ts';
import { capsulePid } from './helpers/capsules.ts';
import { jackinStderrOffTerminal } from './helpers/terminal-stderr.ts';
import { stopChild } from './helpers/stop-child.ts';
import { socketAddress } from '../src/transport/socket-address.ts';

/** OSC 52 (set the clipboard), CSI (clear screen, colour), 8-bit CSI/OSC/ST/NEL, a line break and BEL. */
const HOSTILE = 'A\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07B\x1b[2J\x1b[31mC\u009b6nD\u009d52;c;eA==\u009cE\u0085F\r\nG\x07';
/** The same without the line break (a relay's last stderr line is shown), as printf(1) octal escapes. */
const HOSTILE_PRINTF = 'A\\033]52;c;Y3VybCBldmlsIHwgc2g=\\007B\\033[2J\\033[31mC\\302\\2336nD\\302\\23552;c;eA==\\302\\234E\\302\\205F\\rG\\007';
/** What the first characters of HOSTILE look like once inert: proof the text did reach the output. */
const SHOWN = 'A\\x1b]52;c;';

/** Fails when `out` holds any control character but \t, \n, \r (after removing `allowed`, jackin's own sequences). */
function assertInert(what: string, out: Buffer | string, allowed: readonly string[] = []): string {
  let text = typeof out === 'string' ? out : new TextDecoder('utf-8', { fatal: true }).decode(out);
  for (const a of allowed) text = text.split(a).join('');
  const bad = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.exec(text);
  assert.equal(bad, null, `${what} wrote a raw control character U+${bad?.[0].codePointAt(0)?.toString(16)} in ${JSON.stringify(text)}`);
  return text;
}

/** A capsule whose every answer carries HOSTILE: status, offers, export refusals and stream failures, Shutdown. */
async function hostileCapsule(t: TestContext, home: string, name: string): Promise<void> {
  const dir = join(home, 'sockets', name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let mode: 'control' | 'attach' | undefined;
    const control = new ControlMessageDecoder();
    const frames = createClientFrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      mode ??= chunk[0] === 0x00 ? 'control' : 'attach';
      if (mode === 'attach') {
        for (const item of frames.push(chunk)) {
          if (item.ok && item.frame.type === 'Hello') {
            socket.write(encodeServerFrame({ type: 'Welcome', sessions: 1, features: null }));
            socket.write(encodeServerFrame({ type: 'Notice', level: 'info', text: HOSTILE }));
            socket.write(encodeServerFrame({ type: 'Shutdown', reason: HOSTILE }));
          }
        }
        return;
      }
      for (const m of control.push(chunk)) {
        const req = m as { method: string; path?: string };
        if (req.method === 'status') {
          socket.end(encodeControlMessage({ ok: true, name, program: [HOSTILE, '--flag'], pid: 1, workspace: HOSTILE, attached: false, clients: 0 }));
        } else if (req.method === 'offers') {
          socket.end(encodeControlMessage({ ok: true, file: `/w/${HOSTILE}stream-fail`, url: null }));
        } else if (req.method === 'export' && req.path?.endsWith('stream-fail') === true) {
          socket.write(encodeControlMessage({ ok: true, exportId: '7', name: HOSTILE, size: 10, kind: 'file' }));
          socket.write(encodeServerFrame({ type: 'FileExportStart', exportId: 7n, size: 10, source: req.path, name: HOSTILE, reveal: false, open: false }));
          socket.write(encodeServerFrame({ type: 'FileExportChunk', exportId: 7n, offset: 0, bytes: Buffer.from('12345') }));
          socket.end(encodeServerFrame({ type: 'Notice', level: 'error', text: `E_CHANGED_WHILE_READING: ${HOSTILE}` }));
        } else {
          socket.end(encodeControlMessage({ ok: false, code: 'E_POLICY_DENIED', message: HOSTILE }));
        }
      }
    });
  });
  // Through its directory when the path is longer than a socket address holds (a long TMPDIR).
  const address = socketAddress(join(dir, 'jackin.sock'));
  await new Promise<void>((resolve) => server.listen(address.address, resolve)).finally(address.release);
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
}

function setup(t: TestContext): { home: string; env: NodeJS.ProcessEnv } {
  const base = mkdtempSync(join(tmpdir(), 'jackin-inert-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  const downloads = join(base, 'dl');
  mkdirSync(downloads, { recursive: true });
  // An instance left behind whose capsule.json (writable by a container through the bind-mounted run
  // directory) and even whose directory name carry escapes.
  const stale = join(home, 'sockets', `stale\x1b[2J\u009b6n`);
  mkdirSync(stale, { recursive: true });
  writeFileSync(join(stale, 'capsule.json'), JSON.stringify({ pid: 1, name: 'stale', program: [HOSTILE], workspace: HOSTILE, startedAt: HOSTILE }));
  return { home, env: { ...process.env, JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: downloads, JACKIN_CLIPBOARD: 'none', JACKIN_OPENER: 'true' } };
}

/** Runs jackin with pipes; never throws on a non-zero status. */
function jackin(args: string[], env: NodeJS.ProcessEnv): Promise<JackinResult<Buffer>> {
  return runJackin(args, env, { encoding: 'buffer', timeoutMs: 60_000 });
}

/** Runs jackin on a real PTY (stdout and stderr are the terminal) and returns every byte it wrote. */
function jackinOnPty(t: TestContext, args: string[], env: NodeJS.ProcessEnv): Promise<Buffer> {
  return new Promise((resolve) => {
    const term = pty.spawn(process.execPath, [JACKIN_BIN, ...args], {
      name: 'xterm-256color',
      cols: 200,
      rows: 30,
      env: env as Record<string, string>,
      encoding: null,
    });
    const chunks: Buffer[] = [];
    term.onData((d) => chunks.push(typeof d === 'string' ? Buffer.from(d) : d));
    term.onExit(() => resolve(Buffer.concat(chunks)));
    t.after(() => {
      try {
        term.kill();
      } catch {
        // already gone
      }
    });
  });
}

test("jackin ls and ls --json show a capsule's program and an instance directory's name inert", async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const r = await jackin(['ls'], env);
  assert.equal(r.code, 0, r.stderr.toString());
  const text = assertInert('jackin ls', r.stdout);
  assert.ok(text.includes(SHOWN), text);
  assert.match(text, /^stale\\x1b\[2J\\x9b6n +stale/mu);
  assertInert('jackin ls (stderr)', r.stderr);
  const j = await jackin(['ls', '--json'], env);
  assertInert('jackin ls --json', j.stdout);
  // The JSON still carries the exact strings, escaped.
  const list = JSON.parse(j.stdout.toString()) as Array<{ name: string; program: string[] | null }>;
  assert.deepEqual(list.find((i) => i.name === 'evil')?.program, [HOSTILE, '--flag']);
  assert.deepEqual(list.find((i) => i.name.startsWith('stale'))?.program, [HOSTILE]);
});

test('jackin doctor shows instance names inert, as text and as JSON', async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const r = await jackin(['doctor'], env);
  const text = assertInert('jackin doctor', r.stdout);
  assert.ok(text.includes('instance:stale\\x1b[2J\\x9b6n'), text);
  const j = await jackin(['doctor', '--json'], env);
  assertInert('jackin doctor --json', j.stdout);
  assert.ok(JSON.parse(j.stdout.toString()).checks.some((c: { name: string }) => c.name === 'instance:stale\x1b[2J\u009b6n'));
});

test("jackin export prints a capsule's refusal inert, as text and as JSON", async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const r = await jackin(['export', '--from', 'evil', 'nope.txt'], env);
  assert.equal(r.code, 1);
  const text = assertInert('jackin export (refused)', r.stderr);
  assert.ok(text.includes(SHOWN), text);
  assertInert('jackin export (stdout)', r.stdout);
  const j = await jackin(['export', '--from', 'evil', '--json', 'nope.txt'], env);
  assertInert('jackin export --json', j.stdout);
  assert.equal(JSON.parse(j.stdout.toString()).message, HOSTILE);
  // Each attempt is in the host's own log, with the capsule's text kept exactly (shown inert by jackin log).
  const logged = await readActions(home, 'evil');
  assert.deepEqual(
    logged.map((r) => [r.action, r.target, r.result]),
    [
      ['export', 'nope.txt', 'refused'],
      ['export', 'nope.txt', 'refused'],
    ],
  );
  assert.equal(logged[0]?.detail, `E_POLICY_DENIED: ${HOSTILE}`);
});

test('jackin export --offered on a terminal: the offered path, the progress line and a stream failure are inert', async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const out = await jackinOnPty(t, ['export', '--from', 'evil', '--offered'], env);
  // The progress meter's own "return, erase line" is the one sequence jackin writes here.
  const text = assertInert('jackin export --offered', out, ['\r\x1b[K']);
  assert.ok(text.includes(`export /w/${SHOWN}`), text);
  assert.match(text, /E_CHANGED_WHILE_READING/u);
  // The progress line named the file by the offered path's last component, sanitised.
  assert.ok(text.includes('A]52;c;Y3VybCBldmlsIHwgc2g=B[2J[31mC6nD52;c;eA==EFGstream-fail: 0 B / 10 B'), text);
});

test("a relay's last stderr line is shown inert by jackin export --exec and jackin attach --exec", async (t) => {
  const { env } = setup(t);
  const relay = `printf '${HOSTILE_PRINTF}' >&2; exit 3`;
  const e = await jackin(['export', '--from', 'box', '--exec', relay, 'x.txt'], env);
  assert.equal(e.code, 1);
  const etext = assertInert('jackin export --exec', e.stderr);
  assert.ok(etext.includes(SHOWN), etext);
  const a = await jackinStderrOffTerminal(t, ['attach', 'box', '--exec', relay], env);
  assert.equal(a.code, 1);
  const atext = assertInert('jackin attach --exec', a.stderr);
  assert.match(atext, /relay exited with status 3/u);
  assert.ok(atext.includes(SHOWN), atext);
});

test('the Shutdown reason at the end of jackin attach is shown inert', async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const r = await jackinStderrOffTerminal(t, ['attach', 'evil'], env);
  assert.equal(r.code, 1);
  const text = assertInert('jackin attach (shutdown)', r.stderr);
  assert.match(text, /ended by the capsule: A\\x1b\]52;c;/u);
});

test("jackin attach --verbose writes the capsule's notices and Shutdown reason to its diagnostics inert", async (t) => {
  const { home, env } = setup(t);
  await hostileCapsule(t, home, 'evil');
  const r = await jackinStderrOffTerminal(t, ['attach', '--verbose', 'evil'], env);
  assert.equal(r.code, 1);
  const text = assertInert('jackin attach --verbose', r.stderr);
  assert.ok(text.includes(`capsule notice (info): ${SHOWN}`), text);
  assert.ok(text.includes(`jackin: shutdown: ${SHOWN}`), text);
});

test('jackin stage prints a host path a container named (a workspace file and the symlink to it) inert', { timeout: 60_000 }, async (t) => {
  const { home, env } = setup(t);
  const runDir = join(home, 'sockets', 'real');
  const child = spawn(process.execPath, [CAPSULE_BIN, 'serve', '--run-dir', runDir, '--name', 'real', '--', 'sleep', '600'], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  child.unref();
  // By its pid: setup's clean-up (registered first, so run first) removes the home that stopCapsules reads.
  t.after(() => (child.ref(), stopChild(child)));
  await capsulePid(home, 'real', 20_000);
  // A workspace the container writes: a file whose name carries escapes, and a symlink to it.
  const ws = join(home, 'ws');
  mkdirSync(ws);
  const target = join(ws, `shot${HOSTILE.replace(/[\r\n]/g, '')}.png`);
  writeFileSync(target, 'not really a png\n');
  symlinkSync(target, join(ws, 'link.png'));
  const r = await jackin(['stage', '--to', 'real', join(ws, 'link.png')], env);
  assert.equal(r.code, 0, r.stderr.toString());
  const out = assertInert('jackin stage (stdout)', r.stdout);
  const err = assertInert('jackin stage (stderr)', r.stderr);
  assert.ok(out.includes(`(symlink to ${join(ws, 'shot')}A\\x1b]52;c;`), out);
  assert.ok(err.includes('staged its target'), err);
});
