import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { CONFIRM_ARM_MS } from '../../src/host/session/confirm-controller.ts';
import { pollUntil } from './poll.ts';
import { testDir } from './test-run.ts';
import { screenShows, TmuxPane, shellQuote, type TmuxOptions } from './tmux.ts';

/** Root of this checkout: e2e tests run the built binaries under bin/ (the test runner builds dist/ first). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The two binaries, run by this node: `process.execPath, [JACKIN_BIN, ...args]`. */
export const JACKIN_BIN = join(REPO_ROOT, 'bin', 'jackin.js');
export const CAPSULE_BIN = join(REPO_ROOT, 'bin', 'jackin-capsule.js');

/** `jackin` as a shell command line, with the absolute node so the pane's PATH does not matter. */
export const JACKIN = `${shellQuote(process.execPath)} ${shellQuote(JACKIN_BIN)}`;
/** `jackin-capsule` as a shell command line, likewise. */
export const JACKIN_CAPSULE = `${shellQuote(process.execPath)} ${shellQuote(CAPSULE_BIN)}`;

/** How a `jackin` run ended: its exit status (-1 when a signal ended it or it could not start) and its output. */
export interface JackinResult<T extends string | Buffer = string> {
  code: number;
  stdout: T;
  stderr: T;
}

interface RunJackinOptions {
  /** Kills a run that takes longer (then `code` is -1); none by default. */
  timeoutMs?: number;
}

/** Runs `jackin` (bin/jackin.js, by this node) to its end with `env`; never throws on a non-zero status. */
export function runJackin(args: readonly string[], env: NodeJS.ProcessEnv, options?: RunJackinOptions & { encoding?: 'utf8' }): Promise<JackinResult>;
export function runJackin(args: readonly string[], env: NodeJS.ProcessEnv, options: RunJackinOptions & { encoding: 'buffer' }): Promise<JackinResult<Buffer>>;
export function runJackin(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  { timeoutMs = 0, encoding = 'utf8' }: RunJackinOptions & { encoding?: 'utf8' | 'buffer' } = {},
): Promise<JackinResult<string | Buffer>> {
  return new Promise((resolve) => {
    execFile(process.execPath, [JACKIN_BIN, ...args], { env, encoding, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (e, stdout, stderr) => {
      resolve({ code: e === null ? 0 : typeof e.code === 'number' ? e.code : -1, stdout, stderr });
    });
  });
}

/** A fixture script under test/fixtures/attach/, as a shell command line run by this node. */
export function fixtureCommand(script: string, ...args: string[]): string {
  const path = join(REPO_ROOT, 'test', 'fixtures', 'attach', script);
  return [process.execPath, path, ...args].map(shellQuote).join(' ');
}

/** A script the inner shell runs: prints `printf`-ready `sequences`, then `emitted-done`; its command line quotes none of them. */
export function emitterCommand(t: { after: (fn: () => void) => void }, sequences: string): string {
  const script = join(testDir(t, 'jackin-emit-'), 'emit.sh');
  writeFileSync(script, `printf ${shellQuote(sequences)}\nprintf 'emitted-%s\\n' done\n`);
  return `sh ${shellQuote(script)}`;
}

/**
 * The program most tests run inside the capsule: a bash with no startup files and a prompt that cannot be
 * mistaken for the outer shell's `$ `.
 */
export const INNER_SHELL = `env PS1='in$ ' bash --norc --noprofile`;
/** A screen line that is exactly the inner prompt (tmux trims trailing blanks). */
export const INNER_PROMPT = /^in\$$/m;
/** A screen line that is exactly the outer shell's prompt. */
export const OUTER_PROMPT = /^\$$/m;

/** Time for node to start twice (jackin, then the capsule it spawns) on a loaded 2-core CI machine. */
export const START_TIMEOUT_MS = 20_000;

export function jackinRun(name: string, program: string = INNER_SHELL): string {
  return `${JACKIN} run --name ${shellQuote(name)} -- ${program}`;
}

export function jackinAttach(name: string): string {
  return `${JACKIN} attach ${shellQuote(name)}`;
}

/** Starts a pane for one test and makes sure it (and any capsule it started) is gone when the test ends. */
export async function paneFor(t: TestContext, opts: TmuxOptions = {}): Promise<TmuxPane> {
  const pane = await TmuxPane.start({
    ...opts,
    // The image-paste trigger (a later issue) would take 0x16 out of the byte stream.
    env: { JACKIN_PASTE_KEY: 'none', ...opts.env },
  });
  t.after(() => pane.kill());
  if (opts.command === undefined) await pane.waitForText(OUTER_PROMPT);
  return pane;
}

/**
 * Starts `jackin run` for `program` in the pane's shell and waits until the program's screen shows `ready`.
 * Output of the shell after jackin exits (its status) is printed as `jackin-rc=<n>`.
 *
 * `ready` must be something only the program prints, never text of the command line: the line's echo stays
 * on the screen until `clear` runs, so such a marker would be seen before jackin even started, and a key
 * sent then goes to the shell, `clear` or a jackin not yet in raw mode (Ctrl+\ is their SIGQUIT): lost.
 * A program that prints a fixed marker builds it at run time (`printf 'NAME-%s' READY`).
 */
export async function startSession(pane: TmuxPane, name: string, ready: string | RegExp = INNER_PROMPT, program: string = INNER_SHELL): Promise<string> {
  const line = `clear; ${jackinRun(name, program)}; echo "jackin-rc=$?"`;
  const { cols } = await pane.size();
  // The echo as the pane shows it: after the prompt (`$ `), wrapped at the pane's width.
  const echoed = `$ ${line}`.match(new RegExp(`.{1,${Math.max(cols, 1)}}`, 'gs'))?.join('\n') ?? '';
  if (screenShows(line, ready) || screenShows(echoed, ready)) {
    throw new Error(`startSession: the ready marker ${String(ready)} is in the command line itself, so it shows before the program runs`);
  }
  await pane.typeLine(line);
  return pane.waitForText(ready, { timeoutMs: START_TIMEOUT_MS });
}

/** Waits for the outer shell to print jackin's exit status (see `startSession`) and returns it. */
export async function waitForJackinExit(pane: TmuxPane, timeoutMs = 10_000): Promise<number> {
  const screen = await pane.waitForText(/^jackin-rc=\d+$/m, { timeoutMs });
  const m = /^jackin-rc=(\d+)$/m.exec(screen);
  return Number(m?.[1]);
}

/**
 * Presses Enter on the host's confirmation prompt until it closes. An Enter within CONFIRM_ARM_MS of the
 * prompt appearing is ignored by design (it was typed for the program, not for the prompt), and a test sees
 * the prompt sooner than that; Enter is pressed again only once twice that time has passed, so a prompt
 * that closed but is not yet repainted away does not get a second one.
 */
export async function confirmOnScreen(pane: TmuxPane, { timeoutMs = 15_000 }: { timeoutMs?: number } = {}): Promise<void> {
  let sentAt = -Infinity;
  await pollUntil(
    'the confirmation prompt to close on Enter',
    async () => {
      if (!(await pane.capture()).includes('jackin: confirm')) return true;
      if (Date.now() - sentAt > 2 * CONFIRM_ARM_MS) {
        sentAt = Date.now();
        await pane.sendKeys('Enter');
      }
      return false;
    },
    { timeoutMs },
  );
}

let attachMarks = 0;

/**
 * Waits until the inner shell (INNER_SHELL) of a session just typed (`clear; jackin attach …`) answers a
 * line of its own: the screen before the command (a detached session's prompt, an earlier `jackin-rc=`)
 * can stay up until `clear` runs, so waiting for the prompt there can be met before jackin even started.
 * The line asks for `attached-N-$PS1`: only the inner shell prints `attached-N-in$`. Typed before jackin
 * is in raw mode, the line waits in the terminal's input queue and reaches the program once it is.
 */
export async function waitForInnerShell(pane: TmuxPane, timeoutMs = START_TIMEOUT_MS): Promise<string> {
  const n = ++attachMarks;
  await pane.typeLine(`echo "attached-$((${n}+0))-$PS1"`);
  return pane.waitForText(new RegExp(`^attached-${n}-in\\$$`, 'm'), { timeoutMs });
}

/**
 * Types a label over the host's link hints until it is taken (the labels' help line `up` goes, or the
 * prompt for the chosen link shows): letters typed within
 * CONFIRM_ARM_MS of the labels appearing choose nothing by design, and a test sees them sooner than that.
 * Typed again only once twice that time passed, so labels that were chosen but not yet repainted away do
 * not get a second one.
 */
export async function typeLabel(pane: TmuxPane, label: string, up = 'type a label to', { timeoutMs = 15_000 }: { timeoutMs?: number } = {}): Promise<void> {
  let sentAt = -Infinity;
  await pollUntil(
    `the label ${label} to be taken`,
    async () => {
      const screen = await pane.capture();
      // Taken: the labels are gone, or the prompt for the chosen link is up (the labels' help line stays under it).
      if (!screen.includes(up) || screen.includes('jackin: confirm')) return true;
      if (Date.now() - sentAt > 2 * CONFIRM_ARM_MS) {
        sentAt = Date.now();
        await pane.type(label);
      }
      return false;
    },
    { timeoutMs },
  );
}
