/**
 * The operator's terminal: raw mode, size, output with backpressure, and its restoration on every path
 * (normal exit, Shutdown, lost connection, exception, SIGTERM/SIGHUP/SIGINT/SIGQUIT).
 *
 * Raw mode also turns output post-processing off (`stty -opost`), as ssh and tmux do: the program's own
 * PTY already applied its output settings, so a second pass on the operator's terminal would be wrong (a
 * program that moves the cursor down with a bare LF, as curses does with onlcr off, would see a CR added)
 * and slow (with onlcr on, the kernel handles every line of output separately: measured as most of the
 * host's CPU while a program floods the terminal).
 *
 * Restoring means two things: the termios settings (Node's setRawMode(false) puts back exactly what it
 * saved when raw mode was entered, output post-processing included) and the terminal modes the program may have switched on through its
 * output. For the latter a fixed "sane" sequence is written, never a full reset (RIS), which would clear
 * the operator's screen and scrollback and reset their colours and tab stops.
 */
import { spawnSync } from 'node:child_process';
import type { ReadStream, WriteStream } from 'node:tty';
import type { Readable, Writable } from 'node:stream';
import { DisposableStore, toDisposable, type Disposable } from '../disposable.ts';
import { ScreenModeTracker } from './screen-mode-tracker.ts';
import { ttySize } from './tty-size.ts';

/** Leave the alternate screen (restores the cursor saved when it was entered). Sent only when it is on. */
export const LEAVE_ALT_SCREEN = '\x1b[?1049l';

/**
 * Modes a program may leave on, each undone. Order matters: the scroll-region reset (DECSTBM) homes the
 * cursor, so it is wrapped in DECSC/DECRC to keep the cursor where the program left it.
 */
export const SANE_RESET = [
  '\x1b[?2026l', // end synchronized output, or the terminal freezes until its timeout
  '\x1b7\x1b[r\x1b8', // full-screen scroll region, cursor kept in place
  '\x1b[0m', // default colours and attributes
  '\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l', // every mouse mode
  '\x1b[?2004l', // bracketed paste
  '\x1b[?1004l', // focus reporting
  '\x1b[?1l\x1b>', // normal cursor keys, numeric keypad
  '\x1b[>4m', // modifyOtherKeys off
  '\x1b[<u', // pop the kitty keyboard flags the program pushed
  '\x1b[?7h', // autowrap on
  '\x1b[?25h', // cursor visible
].join('');

/** The restore sequence for a terminal whose program did or did not leave it on the alternate screen. */
export function restoreSequence(onAlternateScreen: boolean): string {
  return (onAlternateScreen ? LEAVE_ALT_SCREEN : '') + SANE_RESET;
}

export const DEFAULT_SIZE = { rows: 24, cols: 80 } as const;

/** Signals that end jackin; each restores the terminal first and exits with 128 + its number. */
export const FATAL_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT'] as const;
export type FatalSignal = (typeof FATAL_SIGNALS)[number];
const SIGNAL_NUMBERS: Record<FatalSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 };

export function signalExitStatus(sig: FatalSignal): number {
  return 128 + SIGNAL_NUMBERS[sig];
}

export interface TerminalStreams {
  stdin: Readable & Partial<Pick<ReadStream, 'isTTY' | 'setRawMode'>>;
  stdout: Writable & Partial<Pick<WriteStream, 'isTTY' | 'rows' | 'columns'>>;
}

export class HostTerminal {
  readonly stdin: TerminalStreams['stdin'];
  readonly stdout: TerminalStreams['stdout'];
  /** Tracks the program's alternate-screen state from the output written through `write`. */
  readonly modes = new ScreenModeTracker();
  private raw = false;
  private restored = false;
  /** Listeners this terminal installed (stream and signal handlers); released on restore. */
  private readonly store = new DisposableStore();

  constructor(streams: TerminalStreams = { stdin: process.stdin, stdout: process.stdout }) {
    this.stdin = streams.stdin;
    this.stdout = streams.stdout;
    // EPIPE/EIO on the operator's terminal (it went away: SIGHUP, closed pane) must not crash before restore.
    const onError = () => {};
    this.stdout.on('error', onError);
    this.store.add(toDisposable(() => this.stdout.off('error', onError)));
  }

  get isTTY(): boolean {
    return this.stdin.isTTY === true;
  }

  size(): { rows: number; cols: number } {
    return ttySize(this.stdout) ?? { ...DEFAULT_SIZE };
  }

  /** Puts stdin in raw mode (a no-op when it is not a terminal, e.g. a pipe in tests). */
  enterRawMode(): void {
    if (this.stdin.isTTY === true && this.stdin.setRawMode !== undefined) {
      this.stdin.setRawMode(true);
      this.raw = true;
      // Node has no termios call for output flags; stty acts on its stdin, our terminal. Without stty the
      // session still works, with the terminal's own output processing (the previous behaviour).
      const fd = (this.stdin as { fd?: unknown }).fd;
      if (typeof fd === 'number' && this.stdout.isTTY === true) {
        this.outputRaw = spawnSync('stty', ['-opost'], { stdio: [fd, 'ignore', 'ignore'], timeout: 2000 }).status === 0;
      }
    }
  }

  /** Whether output post-processing was turned off (see the header). */
  outputRaw = false;

  /** Calls `cb` with the new size on every SIGWINCH, until the result is disposed (or the terminal restored). */
  onResize(cb: (size: { rows: number; cols: number }) => void): Disposable {
    const handler = () => cb(this.size());
    this.stdout.on('resize', handler);
    return this.store.add(toDisposable(() => this.stdout.off('resize', handler)));
  }

  /** Calls `cb` with every chunk the operator types, until the result is disposed (or the terminal restored). */
  onData(cb: (chunk: Buffer) => void): Disposable {
    this.stdin.on('data', cb);
    return this.store.add(toDisposable(() => this.stdin.off('data', cb)));
  }

  /**
   * Writes program output. Returns false when the terminal is full: the caller pauses its source until
   * `onceDrain` fires (the operator's terminal is the slowest consumer on the path).
   */
  write(bytes: Buffer): boolean {
    this.modes.push(bytes);
    return this.stdout.write(bytes);
  }

  onceDrain(cb: () => void): void {
    this.stdout.once('drain', cb);
  }

  /**
   * Installs handlers for FATAL_SIGNALS that call `onSignal` (which restores and exits). Raw mode turns
   * Ctrl+C into a byte for the program, so these only fire for signals sent by kill, a hangup, etc.
   */
  onFatalSignal(onSignal: (sig: FatalSignal) => void): void {
    for (const sig of FATAL_SIGNALS) {
      const h = () => onSignal(sig);
      process.on(sig, h);
      this.store.add(toDisposable(() => process.off(sig, h)));
    }
  }

  /**
   * Restores the terminal. Idempotent and synchronous in effect on a TTY (Node writes to a TTY blocking
   * on POSIX), so it is safe to call from signal handlers and `exit` paths. Never throws.
   */
  restore(): void {
    if (this.restored) return;
    this.restored = true;
    try {
      if (this.stdout.isTTY === true) this.stdout.write(restoreSequence(this.modes.onAlternateScreen));
    } catch {
      // The terminal is gone; nothing left to restore on it.
    }
    try {
      if (this.raw) this.stdin.setRawMode?.(false);
    } catch {
      // Same: a hung-up TTY rejects tcsetattr.
    }
    this.raw = false;
    this.store.dispose();
    this.stdin.pause();
  }
}
