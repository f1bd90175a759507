/**
 * `jackin-capsule serve`: the program on a PTY, the socket server, `capsule.json`, and the exit path. The
 * capsule exits with the program's status; on SIGTERM/SIGINT/SIGHUP it ends the program first.
 */
import { rmSync, unlinkSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { DisposableStore, onEvent } from '../disposable.ts';
import { CapsuleServer } from './server.ts';
import { CAPSULE_INFO_NAME, prepareRunDir, SOCKET_NAME } from './run-dir.ts';
import { Session } from './session.ts';
import type { ImageSink } from './image-sink.ts';
import { ImageFeature } from './image-feature.ts';
import { registerExportMethods } from './export-methods.ts';
import { loadPolicyFile } from './policy-file.ts';

export const DEFAULT_RUN_DIR = '/jackin/run';

export interface ServeOptions {
  runDir: string;
  workspace: string;
  name?: string;
  program: string[];
  handshakeTimeoutMs?: number;
  imageSink?: ImageSink;
  /** Export policy file (default: the package's policies/default.json); invalid fails the start. */
  policyPath?: string;
  log?: (line: string) => void;
  /** PTY size until a client attaches with its own (default: the session's 80x24). */
  rows?: number;
  cols?: number;
}

export function defaultRunDir(env: NodeJS.ProcessEnv = process.env): string {
  const v = env['JACKIN_RUN_DIR'];
  return v !== undefined && v !== '' ? v : DEFAULT_RUN_DIR;
}

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Runs until the program exits; resolves with the status the capsule should exit with. */
export async function serve(options: ServeOptions): Promise<number> {
  const log = options.log ?? ((line: string) => process.stderr.write(`jackin-capsule: ${line}\n`));
  const runDir = resolve(options.runDir);
  const workspace = resolve(options.workspace);
  const [file, ...args] = options.program;
  if (file === undefined) throw new RangeError('serve needs a program to run');
  // Before anything starts: a bad policy must fail the start, naming the key, not the first export.
  const policy = await loadPolicyFile(options.policyPath);
  await prepareRunDir(runDir);
  const socketPath = join(runDir, SOCKET_NAME);
  const infoPath = join(runDir, CAPSULE_INFO_NAME);

  // JACKIN_RUN_DIR lets `jackin-capsule open-url` / `offer` run inside the session find this capsule.
  const session = Session.spawn({
    file,
    args,
    cwd: workspace,
    env: { ...process.env, JACKIN_RUN_DIR: runDir },
    ...(options.rows !== undefined ? { rows: options.rows } : {}),
    ...(options.cols !== undefined ? { cols: options.cols } : {}),
  });
  // Pasted images are staged under <run>/clipboard/ and removed when the capsule exits.
  const images = options.imageSink === undefined ? new ImageFeature({ runDir, session, log }) : null;
  // Installed before the socket and capsule.json exist, so a SIGTERM from anyone who saw them (an operator,
  // a supervisor, a test) is always handled: the program is stopped and everything is cleaned up.
  // Last resort if something throws past us: never leave a live socket file or an orphaned program.
  const onProcessExit = (): void => {
    try {
      unlinkSync(socketPath);
    } catch {
      // already removed
    }
    try {
      unlinkSync(infoPath);
    } catch {
      // already removed
    }
    if (images !== null) rmSync(images.staging.dir, { recursive: true, force: true });
    session.kill('SIGHUP');
  };
  // Removed once the capsule is done (or failed to start), so nothing runs twice in a long-lived process.
  const processHooks = new DisposableStore();
  processHooks.add(onEvent(process, 'exit', onProcessExit));
  let stopSignal: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (stopSignal === null) log(`received ${sig}: stopping the program`);
    stopSignal = sig;
    void session.terminate();
  };
  for (const s of STOP_SIGNALS) processHooks.add(onEvent(process, s, onSignal));
  let server: CapsuleServer;
  try {
    server = await CapsuleServer.listen({
      socketPath,
      session,
      info: { name: options.name ?? basename(file), program: options.program, workspace, pid: process.pid },
      log,
      ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      imageSink: options.imageSink ?? images!,
    });
  } catch (e) {
    // Not ours to clean: the socket and capsule.json may belong to a capsule that is already running.
    processHooks.dispose();
    session.kill('SIGKILL');
    await session.exited;
    session.dispose();
    throw e;
  }
  registerExportMethods(server.control, { policy, workspace, runDir, notify: (level, text) => server.notify(level, text), log });
  const info = {
    pid: process.pid,
    name: options.name ?? basename(file),
    program: options.program,
    workspace,
    startedAt: new Date().toISOString(),
  };
  await writeFile(infoPath, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });


  const status = await session.exited;
  log(`program exited with status ${status}`);
  await server.shutdown(status, status === 0 ? 'program exited' : `program exited with status ${status}`);
  await unlink(infoPath).catch(() => undefined);
  processHooks.dispose();
  await images?.dispose();
  session.dispose();
  return status;
}
