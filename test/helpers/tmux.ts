import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pollUntil } from './poll.ts';
import { isAlive, stopCapsules } from './capsules.ts';
import { removeTestDir, testDir, testRunEnv } from './test-run.ts';

const run = promisify(execFile);

/** tmux 3.3 needs no config; `-f /dev/null` keeps the operator's ~/.tmux.conf (status bar, key tables) out. */
const NO_CONFIG = '/dev/null';
/** Large enough for `capture-pane` of a 1 MiB scrollback and for `show-buffer`-sized replies. */
const MAX_TMUX_OUTPUT = 64 * 1024 * 1024;
/** The server's socket, relative to the pane's root directory (see `tmux()`). */
const TMUX_SOCKET = './tmux.sock';

export interface TmuxOptions {
  /** Pane size; default 30 rows × 120 columns. */
  rows?: number;
  cols?: number;
  /** Command run in the pane (through `bash -c`); default an interactive `bash --norc --noprofile`. */
  command?: string;
  /** Extra environment for the pane, on top of the clean one (HOME, JACKIN_HOME, TERM, PS1, PATH...). */
  env?: Record<string, string>;
  /** Working directory of the pane; default the temporary HOME. */
  cwd?: string;
}

export interface PaneModes {
  alternateOn: boolean;
  cursorVisible: boolean;
  keypadCursor: boolean;
  keypad: boolean;
  mouseAny: boolean;
  insert: boolean;
  origin: boolean;
  wrap: boolean;
}

/**
 * One private tmux server (its socket in the pane's own temporary directory) with one pane: the operator's terminal in end-to-end tests.
 * The pane starts with a clean environment (HOME and JACKIN_HOME in a fresh temporary directory,
 * TERM=xterm-256color, PS1='$ ', and the test run's TMPDIR and marker: see test-run.ts), so tests see neither
 * the developer's shell setup nor their instances.
 */
export class TmuxPane {
  /** Temporary directory holding HOME; removed by `kill()`. */
  readonly root: string;
  readonly home: string;
  readonly jackinHome: string;
  readonly target = 'main:0.0';
  #killed = false;

  // biome-ignore lint/style/useConsistentMemberAccessibility: built only by its static factory (an asynchronous set-up)
  private constructor(root: string) {
    this.root = root;
    this.home = join(root, 'home');
    this.jackinHome = join(this.home, '.jackin');
  }

  static async start(opts: TmuxOptions = {}): Promise<TmuxPane> {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'jackin-e2e-')));
    const pane = new TmuxPane(root);
    mkdirSync(pane.home, { recursive: true });
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: pane.home,
      JACKIN_HOME: pane.jackinHome,
      TERM: 'xterm-256color',
      SHELL: '/bin/bash',
      PS1: '$ ',
      LANG: 'C.UTF-8',
      // No ~/.bash_history written while kill() removes HOME.
      HISTFILE: '',
      // The keys hint covers the top-right corner of every new session for 3 s: tests that read the screen
      // right after an attach would see it. test/keys-hint-e2e.test.ts turns it on.
      JACKIN_HINT: 'off',
      // Off for every pane: tests read what a session left on the screen; test/alt-screen-e2e.test.ts turns it on.
      JACKIN_ALT_SCREEN: 'off',
      ...testRunEnv(),
      ...opts.env,
    };
    const command = opts.command ?? 'bash --norc --noprofile';
    // tmux adds TMUX, TMUX_PANE and TERM_PROGRAM to a pane's environment and (3.3) does not pass PS1 from
    // its own environment; `env -i` makes the pane's environment exactly `env`.
    const envArgs = Object.entries(env)
      .map(([k, v]) => `${k}=${shellQuote(v)}`)
      .join(' ');
    // A non-interactive bash (tmux's `default-shell -c`, and ours) unsets PS1, so it is exported again
    // right before the pane's command runs.
    const script = env['PS1'] === undefined ? command : `export PS1=${shellQuote(env['PS1'])}; ${command}`;
    const paneCommand = `exec /usr/bin/env -i ${envArgs} /bin/bash -c ${shellQuote(script)}`;
    try {
      await pane.tmux(
        'start-server',
        ';',
        // The pane's TERM is tmux's default-terminal; xterm-256color matches what operators usually have.
        'set-option',
        '-g',
        'default-terminal',
        'xterm-256color',
        ';',
        // A dead pane stays so its exit status can be read (`exitStatus()`).
        'set-option',
        '-g',
        'remain-on-exit',
        'on',
        ';',
        // No status line: the pane is exactly rows × cols and nothing redraws on a clock.
        'set-option',
        '-g',
        'status',
        'off',
        ';',
        'set-option',
        '-g',
        'history-limit',
        '5000',
        ';',
        'new-session',
        '-d',
        '-s',
        'main',
        '-x',
        String(opts.cols ?? 120),
        '-y',
        String(opts.rows ?? 30),
        '-c',
        opts.cwd ?? pane.home,
        paneCommand,
      );
    } catch (e) {
      await pane.kill();
      throw e;
    }
    return pane;
  }

  /** Runs a tmux command against this pane's private server and returns its stdout. */
  async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run('tmux', ['-S', TMUX_SOCKET, '-f', NO_CONFIG, ...args], {
      maxBuffer: MAX_TMUX_OUTPUT,
      // The server's socket (tmux leaves it behind when the server exits) is `root`/TMUX_SOCKET, removed by
      // kill(), named relative to `root` (the server's working directory too): a Unix socket's path is limited
      // to about 107 bytes, which a long TMPDIR (macOS's) would exceed as an absolute path.
      cwd: this.root,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: this.home, ...testRunEnv() },
    });
    return stdout;
  }

  /** Types `text` literally (no key-name lookup), optionally followed by Enter. */
  async type(text: string, { enter = false }: { enter?: boolean } = {}): Promise<void> {
    if (text.length > 0) await this.tmux('send-keys', '-t', this.target, '-l', '--', text);
    if (enter) await this.tmux('send-keys', '-t', this.target, 'Enter');
  }

  /** Types a command line and presses Enter. */
  async typeLine(text: string): Promise<void> {
    await this.type(text, { enter: true });
  }

  /** Sends tmux key names (`Enter`, `C-c`, `Escape`...). */
  async sendKeys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', this.target, ...keys);
  }

  /** Writes arbitrary bytes to the pane's terminal exactly as given (`send-keys -H`). */
  async sendBytes(bytes: Uint8Array | readonly number[]): Promise<void> {
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0'));
    // A bounded argv per call; tmux keeps the order across calls.
    for (let i = 0; i < hex.length; i += 512) {
      await this.tmux('send-keys', '-t', this.target, '-H', ...hex.slice(i, i + 512));
    }
  }

  /**
   * The visible screen as text, one line per row (trailing blanks trimmed). With `joined`, a line the terminal
   * wrapped is one line, as the program wrote it (`capture-pane -J`): what a test reads off one line (a path)
   * must not depend on the pane's width or on the length of the temporary directory in it.
   */
  async capture({ escapes = false, history = false, joined = false }: { escapes?: boolean; history?: boolean; joined?: boolean } = {}): Promise<string> {
    const args = ['capture-pane', '-p', '-t', this.target];
    if (escapes) args.push('-e');
    if (history) args.push('-S', '-');
    if (!joined) return this.tmux(...args);
    // -J also keeps each row's trailing blanks: trimmed here as without it.
    return (await this.tmux(...args, '-J')).replace(/ +$/gm, '');
  }

  /** The visible rows as an array (without the final newline's empty element). */
  async screenLines(): Promise<string[]> {
    const text = await this.capture();
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines;
  }

  /** Waits until the screen (`joined`: its wrapped lines joined, see capture) contains `needle` (a string or a regexp) and returns it. */
  async waitForText(needle: string | RegExp, { timeoutMs = 10_000, joined = false }: { timeoutMs?: number; joined?: boolean } = {}): Promise<string> {
    let last = '';
    return pollUntil(
      `screen to contain ${String(needle)}`,
      async () => {
        last = await this.capture({ joined });
        return screenShows(last, needle) ? last : undefined;
      },
      { timeoutMs, last: () => last },
    );
  }

  /** Waits until `probe(screen)` holds. */
  async waitForScreen(description: string, probe: (screen: string) => boolean, { timeoutMs = 10_000 } = {}): Promise<string> {
    let last = '';
    return pollUntil(
      description,
      async () => {
        last = await this.capture();
        return probe(last) ? last : undefined;
      },
      { timeoutMs, last: () => last },
    );
  }

  /** Resizes the window (and so the pane: it is the only one) to rows × cols. */
  async resize(rows: number, cols: number): Promise<void> {
    await this.tmux('resize-window', '-t', 'main:0', '-x', String(cols), '-y', String(rows));
  }

  async display(format: string): Promise<string> {
    return (await this.tmux('display-message', '-p', '-t', this.target, format)).replace(/\n$/, '');
  }

  async size(): Promise<{ rows: number; cols: number }> {
    const [rows, cols] = (await this.display('#{pane_height} #{pane_width}')).split(' ').map(Number);
    return { rows: rows ?? 0, cols: cols ?? 0 };
  }

  /** The terminal modes tmux holds for the pane: what a program left switched on. */
  async modes(): Promise<PaneModes> {
    const flags = (
      await this.display('#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{keypad_flag} #{mouse_any_flag} #{insert_flag} #{origin_flag} #{wrap_flag}')
    ).split(' ');
    const f = (i: number): boolean => flags[i] === '1';
    return {
      alternateOn: f(0),
      cursorVisible: f(1),
      keypadCursor: f(2),
      keypad: f(3),
      mouseAny: f(4),
      insert: f(5),
      origin: f(6),
      wrap: f(7),
    };
  }

  async paneDead(): Promise<boolean> {
    return (await this.display('#{pane_dead}')) === '1';
  }

  /** The exit status of the pane's command once it died (needs remain-on-exit, which `start` sets). */
  async exitStatus(): Promise<number | undefined> {
    const [dead, status] = (await this.display('#{pane_dead} #{pane_dead_status}')).split(' ');
    if (dead !== '1' || status === undefined || status === '') return undefined;
    return Number(status);
  }

  /** Waits for the pane's command to exit; on timeout the error shows the screen and what still runs. */
  async waitForExit({ timeoutMs = 10_000 }: { timeoutMs?: number } = {}): Promise<number> {
    try {
      return await pollUntil('pane command to exit', () => this.exitStatus(), { timeoutMs });
    } catch (e) {
      throw new Error(`${(e as Error).message}\nscreen:\n${await this.capture()}\nprocesses:\n${await this.processes()}`, { cause: e });
    }
  }

  /** `ps` of the processes on the pane's terminal, for diagnostics. */
  async processes(): Promise<string> {
    try {
      const tty = (await this.display('#{pane_tty}')).replace(/^\/dev\//, '');
      const { stdout } = await run('ps', ['-o', 'pid,ppid,stat,args', '-t', tty]);
      return stdout;
    } catch (e) {
      return `(ps failed: ${(e as Error).message})`;
    }
  }

  /** Pastes the contents of a file into the pane as a terminal paste would (no LF → CR rewriting). */
  async pasteFile(path: string): Promise<void> {
    await this.tmux('load-buffer', '-b', 'e2e-paste', path);
    await this.tmux('paste-buffer', '-r', '-d', '-b', 'e2e-paste', '-t', this.target);
  }

  /** Stops capsules started under this HOME, kills the server and removes the temporary HOME. Safe to call twice and after a failed start. */
  async kill(): Promise<void> {
    if (this.#killed) return;
    this.#killed = true;
    try {
      await stopCapsules(this.jackinHome);
    } catch {
      // Best effort: the server and the directory still go.
    }
    let panePid: number | undefined;
    try {
      panePid = Number(await this.display('#{pane_pid}')) || undefined;
    } catch {
      // No server: nothing runs in the pane.
    }
    try {
      await this.tmux('kill-server');
      // The pane's process gets SIGHUP and may still write under HOME (a shell, a jackin restoring the
      // terminal and removing files): wait for it before removing the tree.
      if (panePid !== undefined) {
        await pollUntil(`pane process ${panePid} to exit`, () => !isAlive(panePid), { timeoutMs: 3000 }).catch(() => undefined);
      }
    } catch {
      // Already gone (the pane's command ended and nothing else held the server): nothing to stop.
    }
    // A capsule that was still stopping may write its log as we remove the tree: retry on ENOTEMPTY.
    removeTestDir(this.root);
  }
}

/**
 * Everything written to the pane from now on (`pipe-pane -O`: what the program in it writes, jackin's
 * output when jackin runs there), read with the returned function; the pipe stops when the test ends.
 */
export async function pipePaneOutput(t: { after: (fn: () => unknown) => void }, pane: TmuxPane, encoding: BufferEncoding): Promise<() => string> {
  const log = join(testDir(t, 'jackin-pipe-'), 'written.bin');
  await pane.tmux('pipe-pane', '-O', '-t', pane.target, `cat >> ${shellQuote(log)}`);
  t.after(() => pane.tmux('pipe-pane', '-t', pane.target).catch(() => undefined));
  return () => (existsSync(log) ? readFileSync(log, encoding) : '');
}

/** Whether a captured screen contains `needle` (a string, or a match of a regexp). */
export function screenShows(screen: string, needle: string | RegExp): boolean {
  if (typeof needle === 'string') return screen.includes(needle);
  needle.lastIndex = 0;
  return needle.test(screen);
}

/** Single-quotes a string for POSIX shells. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
