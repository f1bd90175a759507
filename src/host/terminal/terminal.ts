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
 * output. For the latter the terminal filter's restore sequence is written (terminal-filter/modes.ts),
 * never a full reset (RIS), which would clear the operator's screen and scrollback.
 *
 * Program output reaches the operator's terminal only through `writeOutput`, i.e. through the host's
 * terminal filter (docs/terminal-policy.md), which also tracks the modes to restore; `write` is for the
 * host's own bytes (palette, notices, mode changes it needs).
 */
import { spawnSync } from 'node:child_process';
import type { ReadStream, WriteStream } from 'node:tty';
import type { Readable, Writable } from 'node:stream';
import { DisposableStore, Emitter, toDisposable, type Disposable } from '../../disposable.ts';
import type { FilterEvent, TerminalFilterOptions } from './terminal-filter/context.ts';
import { TerminalFilter } from './terminal-filter/filter.ts';
import type { HostNeeds } from './terminal-filter/modes.ts';
import { ttySize } from './tty-size.ts';
import { envSwitch } from '../../policy/env-switch.ts';

/** Whether a session holds the terminal's alternate screen (JACKIN_ALT_SCREEN, default on). */
export function altScreenWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  return envSwitch(env, 'JACKIN_ALT_SCREEN');
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
  /** The firewall between the program's output and this terminal; it also tracks the modes to restore. */
  readonly filter: TerminalFilter;
  #raw = false;
  #restored = false;
  /** Listeners this terminal installed (stream and signal handlers); released on restore. */
  readonly #store = new DisposableStore();
  readonly #filterEvents = this.#store.add(new Emitter<FilterEvent>());
  /** Something the filter found in the program's output (copy offers, mode changes, drops). */
  readonly onFilterEvent = this.#filterEvents.event;

  constructor(streams: TerminalStreams = { stdin: process.stdin, stdout: process.stdout }, filter: Omit<TerminalFilterOptions, 'onEvent'> = {}) {
    this.stdin = streams.stdin;
    this.stdout = streams.stdout;
    this.filter = new TerminalFilter({ ...filter, onEvent: (e) => this.#filterEvents.fire(e) });
    // EPIPE/EIO on the operator's terminal (it went away: SIGHUP, closed pane) must not crash before restore.
    const onError = () => {};
    this.stdout.on('error', onError);
    this.#store.add(toDisposable(() => this.stdout.off('error', onError)));
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
      this.#raw = true;
      // Node has no termios call for output flags; stty acts on its stdin, our terminal. Without stty the
      // session still works, with the terminal's own output processing (the previous behaviour).
      const fd = (this.stdin as { fd?: unknown }).fd;
      if (typeof fd === 'number' && this.stdout.isTTY === true) {
        this.outputRaw = spawnSync('stty', ['-opost'], { stdio: [fd, 'ignore', 'ignore'], timeout: 2000 }).status === 0;
      }
    }
  }

  /**
   * Switches the terminal to its alternate screen for the session (as tmux does): the restore leaves it, so
   * a detach or the program's exit gives back the screen and cursor the operator had. Only on a terminal,
   * and not with JACKIN_ALT_SCREEN=off (the session then draws on the operator's screen, which keeps it).
   */
  holdAltScreen(env: Readonly<Record<string, string | undefined>>): void {
    if (!altScreenWanted(env) || this.stdout.isTTY !== true || this.#restored) return;
    this.filter.holdAltScreen();
    this.stdout.write('\x1b[?1049h');
  }

  /** Whether output post-processing was turned off (see the header). */
  outputRaw = false;

  /** Calls `cb` with the new size on every SIGWINCH, until the result is disposed (or the terminal restored). */
  onResize(cb: (size: { rows: number; cols: number }) => void): Disposable {
    const handler = () => cb(this.size());
    this.stdout.on('resize', handler);
    return this.#store.add(toDisposable(() => this.stdout.off('resize', handler)));
  }

  /** Calls `cb` with every chunk the operator types, until the result is disposed (or the terminal restored). */
  onData(cb: (chunk: Buffer) => void): Disposable {
    this.stdin.on('data', cb);
    return this.#store.add(toDisposable(() => this.stdin.off('data', cb)));
  }

  /**
   * Writes program output through the filter. Returns false when the terminal is full: the caller pauses
   * its source until `onceDrain` fires (the operator's terminal is the slowest consumer on the path).
   */
  writeOutput(bytes: Buffer): boolean {
    const out = this.filter.push(bytes);
    if (out.length > 0) for (const tap of this.#taps) tap(out);
    return out.length === 0 ? !this.stdout.writableNeedDrain : this.stdout.write(out);
  }

  readonly #taps = new Set<(bytes: Buffer) => void>();

  /** Sees the program output written to the terminal (after the filter) until disposed: the host's own view of the screen. */
  tapOutput(listener: (bytes: Buffer) => void): Disposable {
    const tap = (bytes: Buffer): void => listener(bytes);
    this.#taps.add(tap);
    return toDisposable(() => this.#taps.delete(tap));
  }

  /** Writes the host's own bytes (palette, notices, its own modes), unfiltered. */
  write(bytes: Buffer): boolean {
    return this.stdout.write(bytes);
  }

  /**
   * Host UI goes up (palette, prompt, notice): the colours the program changed are reset to the operator's
   * for as long as the result is not disposed, and the program's put back after (terminal-filter/modes.ts,
   * ProgramColours). Holds nest.
   */
  hostColours(): Disposable {
    this.#writeHostUi(this.filter.hostColoursBegin());
    let held = true;
    return toDisposable(() => {
      if (!held) return;
      held = false;
      // The program's margins too: the palette and prompts switched them off, and their repaint does not
      // set them (a notice puts them back after each drawing, notice-overlay.ts).
      this.#writeHostUi(this.filter.hostColoursEnd() + this.filter.layoutRestore());
    });
  }

  /** What gives the program back the left/right margins jackin's drawing switched off. */
  layoutRestore(): string {
    return this.filter.layoutRestore();
  }

  #writeHostUi(s: string): void {
    if (s !== '' && !this.#restored) this.stdout.write(Buffer.from(s, 'latin1'));
  }

  #hostNeeds: HostNeeds = { mouseCapture: false, bracketedPaste: false, focusReports: false };

  /** Changes what the host needs from the terminal (click capture, bracketed paste); writes the change. */
  setHostNeeds(needs: Partial<HostNeeds>): void {
    this.#hostNeeds = { ...this.#hostNeeds, ...needs };
    const diff = this.filter.setHostNeeds(this.#hostNeeds);
    // Like the restore, only for a real terminal: a pipe gets no mode sequences of ours.
    if (diff.length > 0 && !this.#restored && this.stdout.isTTY === true) this.stdout.write(diff);
  }

  /** Calls `cb` once, the next time the terminal drains, unless the result is disposed first. */
  onceDrain(cb: () => void): Disposable {
    this.stdout.once('drain', cb);
    return toDisposable(() => this.stdout.off('drain', cb));
  }

  /**
   * Installs handlers for FATAL_SIGNALS that call `onSignal` (which restores and exits). Raw mode turns
   * Ctrl+C into a byte for the program, so these only fire for signals sent by kill, a hangup, etc.
   */
  onFatalSignal(onSignal: (sig: FatalSignal) => void): Disposable {
    const subs = new DisposableStore();
    for (const sig of FATAL_SIGNALS) {
      const h = () => onSignal(sig);
      process.on(sig, h);
      subs.add(toDisposable(() => process.off(sig, h)));
    }
    return this.#store.add(subs);
  }

  /**
   * Restores the terminal. Idempotent and synchronous in effect on a TTY (Node writes to a TTY blocking
   * on POSIX), so it is safe to call from signal handlers and `exit` paths. Never throws.
   */
  restore(): void {
    if (this.#restored) return;
    this.#restored = true;
    try {
      // end() closes a graphics string the program left open, so the restore is read as sequences.
      if (this.stdout.isTTY === true) this.stdout.write(Buffer.concat([this.filter.end(), Buffer.from(this.filter.restoreSequence(), 'latin1')]));
    } catch {
      // The terminal is gone; nothing left to restore on it.
    }
    try {
      if (this.#raw) this.stdin.setRawMode?.(false);
    } catch {
      // Same: a hung-up TTY rejects tcsetattr.
    }
    this.#raw = false;
    this.#store.dispose();
    this.stdin.pause();
  }
}
