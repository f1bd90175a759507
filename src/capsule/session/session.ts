/**
 * The program on a PTY, relayed as raw bytes. PTY output goes to the output sink (the attached client)
 * first and to the screen model after; both can hold the PTY's output (pause reading it) instead of
 * buffering without bound. Input is written as Buffers, never decoded, with backpressure reported to the
 * caller.
 */
import { closeSync, constants as fsConstants, openSync, readSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Pty from '@lydell/node-pty';
import { DisposableStore, Emitter, onEvent, toDisposable, type Disposable } from '../../disposable.ts';
import { JackinError } from '../../errors.ts';
import type { ListedLink, ProgramModes } from '../../protocol/index.ts';
import type { ResolvedLink, ResolvedPath, ResolveOptions } from '../screen/links.ts';
import { PtyInternals, spawnWithExitHook } from './pty-internals.ts';
import { ScreenModel, type TerminalModes } from '../screen/screen-model.ts';
import { DEFAULT_COLS, DEFAULT_ROWS } from './pty-size.ts';
import { collectGarbage, OutputCollector } from './output-gc.ts';

// Loaded with the serve chain, never by the capsule's other commands (an image whose libc cannot load the
// native module still runs them); required, not imported, so a bundle does not hoist it (scripts/bundle.mjs).
const requirePty = createRequire(import.meta.url);
const pty = requirePty('@lydell/node-pty') as typeof Pty;

/** Above this many unparsed bytes the model holds the PTY; it releases below the low mark. The model
 * parses far faster than a terminal draws, so this only bounds memory during floods. */
const MODEL_BACKLOG_HIGH = 8 * 1024 * 1024;
const MODEL_BACKLOG_LOW = 1 * 1024 * 1024;
/**
 * How soon input the PTY did not take (EAGAIN: the program is not reading) is offered again. Input is written
 * to the master's descriptor here, not through node-pty's tty stream: libuv writes a TTY handle as blocking,
 * retrying EAGAIN in a loop, so a paste larger than the PTY's input buffer into a program that echoes it
 * (`cat`, a pipe into `jackin run -- cat`) spun the capsule forever: the program waited for its output to be
 * read, and the capsule, looping on the write, never read it.
 */
const INPUT_RETRY_MS = 5;
/** Time a program gets between SIGHUP and SIGKILL when the capsule is told to stop. */
const TERMINATE_GRACE_MS = 3000;

/**
 * node-pty 1.1 destroys the PTY stream 200 ms after the child exits (DESTROY_SOCKET_TIMEOUT_MS in
 * unixTerminal.js), discarding output still unread: output we left unread because a client was slow, or
 * that the event loop had no time to read. So the session hears of the exit from node-pty's native exit
 * callback, before node-pty arms that timer (pty-internals.ts, spawnWithExitHook), and then reads the rest
 * synchronously (the stream's buffer, then the fd; the kernel's PTY buffer bounds it). Nothing runs on a
 * timer while the program lives. Only when that hook cannot be installed (another node-pty) does the session
 * check whether the child is gone this often instead, a timer due before node-pty's.
 */
const EXIT_WATCH_MS = 50;

/**
 * A read of the PTY master returns at most what the kernel's line discipline holds, 4 KiB (N_TTY_BUF_SIZE),
 * so a flood arrives as one libuv read, one Node stream event and one pass through the sink and the model per
 * 4 KiB. A read at least this long means more is likely queued: the session reads on synchronously until the
 * kernel has nothing (EAGAIN) or READ_ON_BYTES are gathered, and passes it on as one chunk: a sixth less
 * capsule CPU in a flood, mostly fewer allocations for the collector. Shorter reads (keystroke echo, a
 * prompt) go on as they are. READ_ON_BYTES is 16 KiB, not more: larger chunks raised the capsule's peak RSS
 * and saved no CPU (measurements: bench/RESULTS.md, Container, notes).
 */
const READ_ON_FROM = 2048;
const READ_ON_BYTES = 16 * 1024;

/**
 * Such a read ends with one that finds nothing queued, and fs.readSync throws EAGAIN for it: once per burst
 * of a flood. The error is dropped, so it is made without a stack trace (Error.stackTraceLimit 0 during the
 * read), which V8 otherwise gathers from the frames on the stack (perf, one 64 MiB flood: the throw took 145 of
 * the capsule's 1,853 samples with the stack, 35 without). Left alone where the limit cannot be set (frozen
 * intrinsics).
 */
const STACK_LIMIT_WRITABLE = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')?.writable === true;

export interface SessionOptions {
  file: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  rows?: number;
  cols?: number;
  /** TERM for the program; default `$TERM` or xterm-256color. */
  term?: string;
  /**
   * For a host without a terminal (`jackin run` with its output redirected, `serve --plain`): the PTY relays
   * the program's bytes as they are (no echo, no output processing, input bytes not taken as signals) and
   * the output is kept from the start until the first host takes it (`takePlainBacklog`), instead of that
   * host being sent a repaint of the screen.
   */
  plain?: boolean;
}

/**
 * The line discipline a plain session starts its program with, set by the program's own shell before it
 * execs the program, so not one byte is written under the default settings. Canonical input stays on: its
 * VEOF (Ctrl+D) is how the end of the host's input reaches the program as end of file. `stty` failing (none
 * in the image) leaves the defaults: the program still runs.
 */
const PLAIN_TTY_SCRIPT = 'stty -echo -opost -icrnl -ixon -isig -iexten 2>/dev/null; stty erase undef kill undef 2>/dev/null; exec "$0" "$@"';

/** Output kept for a plain session's first host before the PTY is held (read no further) until it comes. */
const PLAIN_BACKLOG_MAX = 8 * 1024 * 1024;

/** Receives PTY output. A sink that cannot keep up calls `hold(name)` and later `release(name)`. */
export type OutputSink = (chunk: Buffer) => void;

/** Exit status in shell convention: the exit code, or 128 + signal number. */
function shellStatus(exitCode: number, signal: number | undefined): number {
  return signal !== undefined && signal > 0 ? 128 + signal : exitCode;
}

export class Session {
  readonly pid: number;
  readonly exited: Promise<number>;
  readonly #proc: Pty.IPty;
  readonly #model: ScreenModel;
  /** node-pty internals, looked up once (see pty-internals.ts for each one's fallback). */
  readonly #internals: PtyInternals;
  #sink: OutputSink | null = null;
  readonly #holds = new Set<string>();
  readonly #drainEmitter = new Emitter<void>();
  readonly #modesEmitter = new Emitter<ProgramModes>();
  /** A fresh terminal has every one of these modes off. */
  #lastModes = '00000';
  #exitStatus: number | null = null;
  #killTimer: Disposable | undefined;
  #exitWatch: Disposable | undefined;
  /** Listeners and timers, released together by dispose(). */
  readonly #store = new DisposableStore();
  #childGone = false;
  /** Our own descriptor on the PTY's slave side (see SLAVE_HOLD below). */
  #slaveFd: number | null = null;
  /** What a synchronous read of the master goes into (read on after a long read, and the drain at exit). */
  readonly #readBuffer = Buffer.allocUnsafeSlow(READ_ON_BYTES);
  /** Input the PTY has not taken yet, oldest first (written to the master's descriptor, see INPUT_RETRY_MS). */
  readonly #input: Buffer[] = [];
  #inputRetry: NodeJS.Timeout | undefined;
  /** A plain session's output until its first host takes it (null: not plain, or taken). */
  #plainBacklog: Buffer[] | null;
  #plainBacklogBytes = 0;
  /** Frees passed-on output chunks during a flood (output-gc.ts). */
  readonly #outputGc = new OutputCollector(collectGarbage);

  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (which spawns the program)
  private constructor(options: SessionOptions) {
    this.#plainBacklog = options.plain === true ? [] : null;
    const rows = options.rows ?? DEFAULT_ROWS;
    const cols = options.cols ?? DEFAULT_COLS;
    const env = { ...(options.env ?? process.env) };
    let spawned: { proc: Pty.IPty; hooked: boolean };
    try {
      const spawn = (): Pty.IPty =>
        pty.spawn(
          options.plain === true ? '/bin/sh' : options.file,
          options.plain === true ? ['-c', PLAIN_TTY_SCRIPT, options.file, ...options.args] : [...options.args],
          {
            name: options.term ?? env['TERM'] ?? 'xterm-256color',
            rows,
            cols,
            cwd: options.cwd ?? process.cwd(),
            env: env as Record<string, string>,
            // null: deliver output as Buffers; decoding per chunk would split UTF-8 sequences.
            encoding: null,
          },
        );
      spawned = spawnWithExitHook(requirePty.resolve('@lydell/node-pty'), spawn, () => this.#onChildGone());
    } catch (cause) {
      throw new JackinError('E_SPAWN_FAILED', `could not start ${JSON.stringify(options.file)}: ${(cause as Error).message}`, { cause });
    }
    this.#proc = spawned.proc;
    this.pid = this.#proc.pid;
    this.#internals = new PtyInternals(this.#proc, spawned.hooked);
    // SLAVE_HOLD: while any descriptor on the slave side is open, reading the master never reports EIO.
    // Without ours, the program's exit closes the last one and the master can report EIO while the tail of
    // its output is still queued in the kernel (seen here: the last few KiB lost under load). Holding it,
    // the exit is noticed by the exit hook (or the watch below), which reads to EAGAIN (everything) and only then lets go.
    const ptsName = this.#internals.ptsName;
    if (ptsName !== undefined) {
      try {
        this.#slaveFd = openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
      } catch {
        this.#slaveFd = null; // best effort: the drain on exit still covers most cases
      }
    }
    if (!spawned.hooked) {
      const exitWatch = setInterval(() => this.#checkChildGone(), EXIT_WATCH_MS);
      exitWatch.unref();
      this.#exitWatch = this.#store.add(toDisposable(() => clearInterval(exitWatch)));
    }
    this.#store.add(this.#drainEmitter);
    this.#store.add(this.#modesEmitter);
    this.#model = new ScreenModel({ rows, cols });
    // The model's replies to the position and status queries it answers (see `answerQueries`) go to the program as input.
    this.#model.onReply = (reply) => void this.write(reply);
    // node-pty's public write() drops the stream's write() result, so backpressure is read from the
    // tty stream it wraps (node-pty 1.1 UnixTerminal._socket). Without it, writes still work unbounded.
    const stream = this.#internals.stream;
    if (stream) this.#store.add(onEvent(stream, 'drain', () => this.#drainEmitter.fire()));
    // Output straight from that stream: node-pty's onData re-fires every read through an emitter of its own
    // (measured: about 80 ms of CPU per 64 MiB of output, a tenth of the capsule's work in a flood).
    // Without the stream, the public onData.
    if (stream) this.#store.add(onEvent(stream, 'data', (chunk: Buffer) => this.#onOutput(this.#readOn(chunk))));
    else this.#store.add((this.#proc.onData as unknown as Pty.IEvent<Buffer>)((chunk) => this.#onOutput(chunk)));
    // Not in the store: `exited` resolves whenever the program ends, also after dispose().
    this.exited = new Promise((resolve) => {
      this.#proc.onExit(({ exitCode, signal }) => {
        this.#killTimer?.dispose();
        this.#stopExitWatch();
        // Everything the program wrote must reach the sink before its exit is reported: callers end the
        // session on `exited`, and output read after that (a held PTY's buffer) would be dropped.
        this.#childGone = true;
        this.#drainNow();
        this.#releaseSlave();
        this.#exitStatus = shellStatus(exitCode, signal);
        resolve(this.#exitStatus);
      });
    });
  }

  static spawn(options: SessionOptions): Session {
    return new Session(options);
  }

  get rows(): number {
    return this.#model.rows;
  }

  get cols(): number {
    return this.#model.cols;
  }

  get modes(): TerminalModes {
    return this.#model.modes;
  }

  /** The modes a host reacts to, from the model (exact after `settle()`). */
  get programModes(): ProgramModes {
    return this.#model.programModes;
  }

  /** Called after parsed output changed one of the program modes (mouse, paste, focus, alt screen). */
  onModesChange(listener: (modes: ProgramModes) => void): Disposable {
    return this.#modesEmitter.event(listener);
  }

  /** Which node-pty internals were found (the rest fall back; see pty-internals.ts). */
  get ptyPieces(): PtyInternals['found'] {
    return this.#internals.found;
  }

  /** The link at a viewport cell, from the model (call after `settle()`). */
  linkAt(row: number, col: number, options: ResolveOptions = {}): ResolvedLink | null {
    return this.#model.linkAt(row, col, options);
  }

  /** The file path at a viewport cell, from the model (call after `settle()`). */
  pathAt(row: number, col: number, options: ResolveOptions = {}): ResolvedPath | null {
    return this.#model.pathAt(row, col, options);
  }

  /** The links the visible screen shows, from the model (call after `settle()`). */
  visibleLinks(): ListedLink[] {
    return this.#model.visibleLinks();
  }

  /** The status once the program exited, else null. */
  get status(): number | null {
    return this.#exitStatus;
  }

  /**
   * While true, the position and status queries in output read from now on (`CSI 6 n`, `CSI 5 n`) are
   * answered from the screen model, in order, as it parses them: the attached host holds the program's output
   * (its palette is up) and the terminal never sees them (extension `held-replies`, docs/terminal-policy.md).
   */
  answerQueries = false;

  /** Sets (or clears) where live output goes. */
  setOutputSink(sink: OutputSink | null): void {
    this.#sink = sink;
  }

  /**
   * A plain session's output so far, once, for its first host (which is sent these bytes instead of a
   * repaint); null for every other host and for a session that is not plain.
   */
  takePlainBacklog(): Buffer[] | null {
    const backlog = this.#plainBacklog;
    this.#plainBacklog = null;
    this.release('plain');
    return backlog;
  }

  /** Stops reading the PTY until every hold is released. Holds are named so owners release only theirs. */
  hold(reason: string): void {
    if (this.#holds.size === 0 && !this.#childGone) this.#internals.pause();
    this.#holds.add(reason);
  }

  release(reason: string): void {
    if (!this.#holds.delete(reason)) return;
    // Resume even after exit: node-pty reports the exit only once it has read the PTY to EOF.
    if (this.#holds.size === 0) this.#internals.resume();
  }

  /** The fallback without the exit hook: whether the child was reaped yet. */
  #checkChildGone(): void {
    try {
      process.kill(this.pid, 0);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') return;
    }
    this.#onChildGone();
  }

  #onChildGone(): void {
    if (this.#childGone || this.#store.isDisposed) return;
    // Reaped: no more output will be produced, so reading the rest cannot grow without bound.
    this.#childGone = true;
    this.#stopExitWatch();
    this.#drainNow();
    this.#releaseSlave();
    this.#internals.resume();
  }

  /** Delivers everything the PTY still holds, in order, before node-pty can discard it. */
  #drainNow(): void {
    // Buffered chunks reach onOutput in order through the 'data' listener, then the fd is read.
    this.#internals.drainStreamBuffer();
    for (let n = this.#readQueued(); n > 0; n = this.#readQueued()) this.#onOutput(Buffer.from(this.#readBuffer.subarray(0, n)));
  }

  /**
   * `chunk` with what the PTY holds after it (see READ_ON_FROM). Only while nothing holds the PTY, and only
   * when the stream has nothing buffered: then `chunk` is the newest output read, and what the fd gives
   * now follows it.
   */
  #readOn(chunk: Buffer): Buffer {
    if (chunk.length < READ_ON_FROM || this.#holds.size > 0 || (this.#internals.stream?.readableLength ?? 1) > 0) return chunk;
    const n = this.#readQueued();
    return n === 0 ? chunk : Buffer.concat([chunk, this.#readBuffer.subarray(0, n)]);
  }

  /**
   * Reads the master synchronously into `readBuffer` until the kernel has nothing queued or less than one
   * read's room (4 KiB) is left; returns how many bytes it holds. Any error ends it: EAGAIN (nothing queued
   * for now), EIO (slave closed and drained); libuv's next read reports it as before. Nothing is read once
   * node-pty has closed the master (PtyInternals.openFd): its number may be another file's by then.
   */
  #readQueued(): number {
    const fd = this.#internals.openFd;
    if (fd === undefined) return 0;
    const buf = this.#readBuffer;
    let n = 0;
    const limit = Error.stackTraceLimit;
    if (STACK_LIMIT_WRITABLE) Error.stackTraceLimit = 0;
    try {
      while (buf.length - n >= 4096) {
        let r: number;
        try {
          r = readSync(fd, buf, n, buf.length - n, null);
        } catch {
          break;
        }
        if (r <= 0) break;
        n += r;
      }
    } finally {
      if (STACK_LIMIT_WRITABLE) Error.stackTraceLimit = limit;
    }
    return n;
  }

  #releaseSlave(): void {
    if (this.#slaveFd === null) return;
    try {
      closeSync(this.#slaveFd);
    } catch {
      // already closed
    }
    this.#slaveFd = null;
  }

  #stopExitWatch(): void {
    this.#exitWatch?.dispose();
    this.#exitWatch = undefined;
  }

  /** Names of the holds currently pausing the PTY's output. */
  get holdReasons(): string[] {
    return [...this.#holds];
  }

  /** Writes input bytes to the program. False means the PTY is not draining: wait for `onDrain`. */
  write(bytes: Buffer): boolean {
    if (this.#exitStatus !== null || bytes.length === 0) return true;
    // The descriptor only with node-pty's stream, which tells whether it is still open (PtyInternals.openFd).
    if (this.#internals.fd !== undefined && this.#internals.stream !== undefined) {
      this.#input.push(bytes);
      if (this.#input.length === 1) this.#writeInput();
      return this.#input.length === 0;
    }
    if (this.#internals.stream) return this.#internals.stream.write(bytes);
    this.#proc.write(bytes as unknown as string);
    return true;
  }

  /**
   * Writes queued input to the master until the PTY takes no more; then tries again in INPUT_RETRY_MS.
   * Fires drain once the queue is empty after a write that returned false.
   */
  #writeInput(): void {
    this.#inputRetry = undefined;
    const backedUp = this.#input.length > 1 || this.#inputRetried;
    while (this.#input.length > 0) {
      const head = this.#input[0]!;
      // Asked before every write: a retry comes a timer later, and node-pty may have closed the master since.
      const fd = this.#internals.openFd;
      let n: number;
      try {
        if (fd === undefined) throw new Error('the PTY is closed');
        n = writeSync(fd, head);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN' && this.#exitStatus === null && !this.#store.isDisposed) {
          this.#inputRetried = true;
          this.#inputRetry = setTimeout(() => this.#writeInput(), INPUT_RETRY_MS);
          return;
        }
        // The PTY is gone (closed, EIO after the exit): the input has nowhere to go.
        this.#input.length = 0;
        break;
      }
      if (n < head.length) this.#input[0] = head.subarray(n);
      else this.#input.shift();
    }
    this.#inputRetried = false;
    if (backedUp) this.#drainEmitter.fire();
  }

  /** Whether input waited for the PTY since the queue was last empty (the writer was told to wait). */
  #inputRetried = false;

  onDrain(listener: () => void): Disposable {
    return this.#drainEmitter.event(listener);
  }

  resize(rows: number, cols: number): void {
    if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1) return;
    if (rows === this.#model.rows && cols === this.#model.cols) return;
    if (this.#exitStatus === null) this.#proc.resize(cols, rows);
    this.#model.resize(rows, cols);
  }

  /** Resolves once the model has parsed all output received so far. */
  settle(): Promise<void> {
    return this.#model.settle();
  }

  /** Reset, modes, clear, screen and cursor (see ScreenModel.repaint); exact after `settle()`. */
  repaint(): Buffer {
    return this.#model.repaint();
  }

  /** Visible text of the screen, one string per row. */
  screenLines(): string[] {
    return this.#model.screenLines();
  }

  get cursor(): { x: number; y: number } {
    return this.#model.cursor;
  }

  /** Sends a signal to the program. */
  kill(signal: NodeJS.Signals): void {
    if (this.#exitStatus !== null) return;
    try {
      this.#proc.kill(signal);
    } catch {
      // Already gone: the exit event follows.
    }
  }

  /** SIGHUP (what a closing terminal sends), then SIGKILL after a grace; resolves with the status. */
  terminate(graceMs = TERMINATE_GRACE_MS): Promise<number> {
    if (this.#exitStatus === null) {
      this.kill('SIGHUP');
      if (this.#killTimer === undefined) {
        const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
        timer.unref();
        this.#killTimer = this.#store.add(toDisposable(() => clearTimeout(timer)));
      }
    }
    return this.exited;
  }

  dispose(): void {
    this.#store.dispose();
    clearTimeout(this.#inputRetry);
    this.#input.length = 0;
    this.#releaseSlave();
    this.#model.dispose();
  }

  /** Compares the modes after a parsed chunk that may have changed them (see ScreenModel.takeModesChanged). */
  #checkModes(): void {
    if (!this.#model.takeModesChanged()) return;
    const modes = this.#model.programModes;
    const key = `${+modes.mouseTracking}${+modes.sgrMouse}${+modes.bracketedPaste}${+modes.focusReporting}${+modes.alternateScreen}`;
    if (key === this.#lastModes) return;
    this.#lastModes = key;
    this.#modesEmitter.fire(modes);
  }

  #onOutput(chunk: Buffer): void {
    if (this.#sink !== null) this.#sink(chunk);
    else if (this.#plainBacklog !== null) {
      this.#plainBacklog.push(chunk);
      this.#plainBacklogBytes += chunk.length;
      if (this.#plainBacklogBytes > PLAIN_BACKLOG_MAX) this.hold('plain');
    }
    this.#model.write(
      chunk,
      () => {
        if (this.#model.backlog < MODEL_BACKLOG_LOW) this.release('model');
        this.#checkModes();
      },
      this.answerQueries,
    );
    if (this.#model.backlog > MODEL_BACKLOG_HIGH) this.hold('model');
    // Last: a collection that falls due on this chunk (a keystroke's echo after a flood) runs once the
    // chunk has gone to the host, not before it.
    this.#outputGc.count(chunk.length);
  }
}
