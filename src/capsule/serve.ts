/**
 * `jackin-capsule serve`: the program on a PTY, the socket server, `capsule.json`, and the exit path. The
 * capsule exits with the program's status; on SIGTERM/SIGINT/SIGHUP it ends the program first.
 */
import { readlinkSync, rmSync, unlinkSync } from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DisposableStore, onEvent } from '../disposable.ts';
import { CapsuleServer } from './session/server.ts';
import { FIRST_HOST_WAIT_MS } from './connection/attach-shutdown.ts';
import { CAPSULE_INFO_NAME, handToRunDirOwner, prepareRunDir, removeForeign } from './session/run-dir.ts';
import { runDirSocketPath } from '../transport/instance-paths.ts';
import { Session } from './session/session.ts';
import type { ImageSink } from './connection/image-sink.ts';
import { ImageFeature } from './images/image-feature.ts';
import { registerExportMethods } from './export/export-methods.ts';
import { registerStageMethod } from './files/stage-method.ts';
import { registerForwardMethod } from './forward/forward-method.ts';
import { installForwardList } from './forward/forward-list.ts';
import { registerClipboardMethod } from './images/clipboard-method.ts';
import { FILES_DIR_NAME, type FileStaging } from './files/file-staging.ts';
import { stageMaxBytes } from '../policy/stage-limits.ts';
import { loadPolicyFile } from './session/policy-file.ts';
import { defaultCapsuleName } from './session/instance-name.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { withoutMultiplexer } from '../policy/operator-multiplexer.ts';

/** The package's browser shims (each `jackin-capsule open-url`), for `serve --browser`. */
export const BROWSER_BIN = join(PACKAGE_ROOT, 'container-bin', 'browser');

/** The package's clipboard shims (xclip, xsel, wl-copy, wl-paste, pbcopy, pbpaste), for `serve --clipboard`. */
export const CLIPBOARD_BIN = join(PACKAGE_ROOT, 'container-bin', 'clipboard');

/**
 * The program's environment: JACKIN_RUN_DIR lets `jackin-capsule open-url` / `offer` run inside the
 * session find this capsule; with `browser`, the browser shims come first on PATH and BROWSER names one;
 * with `clipboard`, the clipboard shims come first on PATH. The program's terminal is this PTY: a
 * multiplexer the capsule was started in (the operator's tmux, for a local `jackin run`) is not shown to
 * it (operator-multiplexer.ts).
 */
export function programEnv(env: NodeJS.ProcessEnv, runDir: string, browser: boolean, clipboard = false): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...withoutMultiplexer(env), JACKIN_RUN_DIR: runDir };
  const first = [...(clipboard ? [CLIPBOARD_BIN] : []), ...(browser ? [BROWSER_BIN] : [])];
  if (first.length > 0) out['PATH'] = [...first, env['PATH'] ? env['PATH'] : '/usr/local/bin:/usr/bin:/bin'].join(':');
  if (browser) out['BROWSER'] = join(BROWSER_BIN, 'jackin-browser');
  return out;
}

export interface ServeOptions {
  runDir: string;
  workspace: string;
  name?: string;
  program: string[];
  /** PTY size until a client attaches with its own (default 80x24): `jackin run` passes the operator's, so nothing is laid out for 80x24 first. */
  rows?: number;
  cols?: number;
  handshakeTimeoutMs?: number;
  imageSink?: ImageSink;
  /** Make the program's browser jackin's (programEnv). */
  browser?: boolean;
  /** Put the clipboard shims first on the program's PATH (programEnv). */
  clipboard?: boolean;
  /** Relay the program's bytes plainly to a first host without a terminal (SessionOptions.plain). */
  plain?: boolean;
  /** Export policy file (default: the package's policies/default.json); invalid fails the start. */
  policyPath?: string;
  log?: (line: string) => void;
}

/** This process's PID namespace (`pid:[4026531836]`), or null off Linux. */
function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/** Said once at start when the capsule is PID 1: nothing reaps the agent's orphaned children then. */
const PID1_WARNING =
  'running as PID 1 without an init: orphaned processes of the program will stay as zombies; start the container with --init (docker/podman run --init, compose `init: true`) or use `jackin run --image`, which does';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Runs until the program exits; resolves with the status the capsule should exit with. */
export async function serve(options: ServeOptions): Promise<number> {
  const log = options.log ?? ((line: string) => process.stderr.write(`jackin-capsule: ${line}\n`));
  const runDir = resolve(options.runDir);
  const workspace = resolve(options.workspace);
  const [file, ...args] = options.program;
  if (file === undefined) throw new RangeError('serve needs a program to run');
  const name = options.name ?? defaultCapsuleName(file);
  // Before anything starts: a bad policy must fail the start, naming the key, not the first export.
  const policy = await loadPolicyFile(options.policyPath);
  const stageCap = stageMaxBytes(process.env);
  await prepareRunDir(runDir);
  const socketPath = runDirSocketPath(runDir);
  const infoPath = join(runDir, CAPSULE_INFO_NAME);

  if (process.pid === 1) log(PID1_WARNING);

  const session = Session.spawn({
    file,
    args,
    cwd: workspace,
    env: programEnv(process.env, runDir, options.browser === true, options.clipboard === true),
    ...(options.rows !== undefined ? { rows: options.rows } : {}),
    ...(options.cols !== undefined ? { cols: options.cols } : {}),
    ...(options.plain === true ? { plain: true } : {}),
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
    rmSync(join(runDir, FILES_DIR_NAME), { recursive: true, force: true });
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
  // Host files (`jackin stage`, pasted paths) go to <run>/files/ and are removed when the capsule exits.
  let files: FileStaging | undefined;
  try {
    server = await CapsuleServer.listen({
      socketPath,
      session,
      info: { name, program: options.program, workspace, pid: process.pid },
      log,
      ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      imageSink: options.imageSink ?? images!,
      registerMethods: (control, srv) => {
        registerExportMethods(control, { policy, workspace, runDir, notify: (level, text) => srv.notify(level, text), log });
        files = registerStageMethod(control, { runDir, maxBytes: stageCap, notify: (level, text) => srv.notify(level, text), log });
        registerForwardMethod(control, { log });
        installForwardList(srv);
        if (images !== null) registerClipboardMethod(control, images, srv.pasted);
      },
    });
  } catch (e) {
    // Not ours to clean: the socket and capsule.json may belong to a capsule that is already running.
    processHooks.dispose();
    session.kill('SIGKILL');
    await session.exited;
    session.dispose();
    throw e;
  }
  await handToRunDirOwner(runDir, [socketPath]);
  const info = {
    pid: process.pid,
    name,
    program: options.program,
    workspace,
    startedAt: new Date().toISOString(),
    // Tells the host whether `pid` is one of its own pids or a container's (another PID namespace).
    pidNamespace: pidNamespace(),
  };
  // A capsule.json left by a capsule that ran as another user (root, then killed) is not writable by us.
  await removeForeign(infoPath);
  // Written whole under another name, owned as it will be, then renamed: `jackin ls` or a test reading it
  // meanwhile sees the old file or the new one, never an empty or half-written one.
  const tmpInfo = join(runDir, `.${CAPSULE_INFO_NAME}.${process.pid}.tmp`);
  // One left by a capsule killed right here (the same pid is common in containers) is removed first.
  await unlink(tmpInfo).catch(() => undefined);
  await writeFile(tmpInfo, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await handToRunDirOwner(runDir, [tmpInfo]);
  await rename(tmpInfo, infoPath);

  const status = await session.exited;
  log(`program exited with status ${status}`);
  // Told to the attached host, which prints it: a stopped container otherwise looks like the program failing.
  const stoppedBy = stopSignal as NodeJS.Signals | null;
  const reason =
    stoppedBy !== null
      ? `the capsule received ${stoppedBy} (its container or supervisor is stopping) and ended the program`
      : status === 0
        ? 'program exited'
        : `program exited with status ${status}`;
  // A program that ended on its own may have done so before the host that started us got to attach: the
  // server waits up to FIRST_HOST_WAIT_MS for a first host, so the exit status still reaches it. Not when
  // stopped by a signal (a supervisor that wants the capsule gone).
  await server.shutdown(status, reason, stoppedBy === null ? { waitForHostMs: FIRST_HOST_WAIT_MS } : {});
  await unlink(infoPath).catch(() => undefined);
  processHooks.dispose();
  await images?.dispose();
  await files?.cleanup();
  session.dispose();
  return status;
}
