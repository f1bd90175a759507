/**
 * The host's desktop notifier (issue 37): `notify-send` (the freedesktop notification service), `osascript`
 * on macOS, a PowerShell toast on Windows and WSL, or `JACKIN_NOTIFIER=command:<argv>` (run with `--`, the
 * title and the body as its last three arguments). Chosen once, like the clipboard: JACKIN_NOTIFIER forces one
 * (`notify-send`, `macos`, `windows`, `none`, `command:<argv>`), else the platform's. Every argv is built by
 * a pure function, so the macOS and Windows ones are pinned by tests where they cannot run.
 *
 * The title and body given here must already be inert (src/ui/inert-text.ts): no control, bidi or escape
 * characters. They are the program's, so they are never read as options or code: they travel as arguments
 * after `--` (notify-send, osascript, command:), never through a shell; osascript gets them as its run
 * handler's arguments (data, not AppleScript source), and PowerShell as single-quoted string literals.
 * A failure's message names only the notifier and how it failed: its stderr (which may echo the program's
 * text) is the error's cause, for the log, never in the message a notice shows.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { envSwitch, isOffWord } from '../../policy/env-switch.ts';
import { detectWsl } from './clipboard/select.ts';
import { splitShellWords } from './shell-words.ts';

/** How long a notifier may run before it counts as failed (notify-send waits for the service's reply). */
const NOTIFIER_TIMEOUT_MS = 10_000;
/** Stderr kept for the error message. */
const MAX_STDERR_BYTES = 2048;
/** The application name notifications carry (notify-send --app-name): they are the program's, not jackin's. */
const NOTIFY_APP_NAME = 'jackin (program)';
/** The AppUserModelID of Windows PowerShell: toasts from an unregistered id are dropped silently. */
const POWERSHELL_APP_ID = '{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\\WindowsPowerShell\\v1.0\\powershell.exe';

export type NotifierChoice =
  | { kind: 'notify-send' }
  | { kind: 'macos' }
  | { kind: 'windows'; wsl: boolean }
  | { kind: 'command'; argv: readonly string[] }
  | { kind: 'none' };

export interface NotifierSelection {
  readonly choice: NotifierChoice;
  /** Why this one, for `jackin doctor` and --verbose. */
  readonly reason: string;
  /** Whether it can be expected to answer (the program is there, and notify-send has a session bus). */
  readonly available: boolean;
}

export interface NotifierCommand {
  readonly file: string;
  readonly args: readonly string[];
}

export interface ChooseNotifierInput {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly wsl: boolean;
  /** Whether a program is on PATH (tests inject it). */
  readonly onPath: (file: string) => boolean;
}

/** Windows PowerShell; under WSL only its .exe name finds it (interop), and on Windows libuv finds it too. */
const powershell = 'powershell.exe';

/** JACKIN_NOTIFIER=command:<argv>, split shell-like; throws E_NOTIFIER_CONFIG for bad quoting or an empty command. */
function commandArgv(raw: string): string[] {
  const words = splitShellWords(
    raw,
    (what) => new JackinError('E_NOTIFIER_CONFIG', `JACKIN_NOTIFIER ${JSON.stringify(`command:${raw}`)} has ${what}; fix the quoting`),
  );
  if (words.length === 0) throw new JackinError('E_NOTIFIER_CONFIG', 'JACKIN_NOTIFIER=command: names no command; give one, as in command:my-notifier --flag');
  return words;
}

/** A session bus notify-send can reach: DBUS_SESSION_BUS_ADDRESS, or the systemd user bus socket. */
function hasSessionBus(env: Readonly<Record<string, string | undefined>>): boolean {
  if ((env['DBUS_SESSION_BUS_ADDRESS'] ?? '') !== '') return true;
  const runtime = env['XDG_RUNTIME_DIR'];
  return runtime !== undefined && runtime !== '' && existsSync(join(runtime, 'bus'));
}

/** The notifier to use and why; throws E_NOTIFIER_CONFIG for an unknown JACKIN_NOTIFIER. */
export function chooseNotifier(input: ChooseNotifierInput): NotifierSelection {
  const { env, platform, wsl, onPath } = input;
  const forced = (env['JACKIN_NOTIFIER'] ?? '').trim();
  if (forced !== '') {
    const reason = `JACKIN_NOTIFIER=${forced}`;
    if (forced.startsWith('command:')) {
      const argv = commandArgv(forced.slice('command:'.length));
      return { choice: { kind: 'command', argv }, reason, available: onPath(argv[0]!) };
    }
    switch (forced.toLowerCase()) {
      case 'notify-send':
        return { choice: { kind: 'notify-send' }, reason, available: onPath('notify-send') && hasSessionBus(env) };
      case 'macos':
        return { choice: { kind: 'macos' }, reason, available: onPath('osascript') };
      case 'windows':
        return { choice: { kind: 'windows', wsl: platform !== 'win32' }, reason, available: onPath(powershell) };
      default:
        if (isOffWord(forced)) return { choice: { kind: 'none' }, reason, available: false };
        throw new JackinError('E_NOTIFIER_CONFIG', `JACKIN_NOTIFIER=${forced} is not a notifier; use notify-send, macos, windows, none or command:<argv>`);
    }
  }
  if (platform === 'darwin') return { choice: { kind: 'macos' }, reason: 'macOS', available: onPath('osascript') };
  if (platform === 'win32') return { choice: { kind: 'windows', wsl: false }, reason: 'Windows', available: onPath(powershell) };
  const notifySend = onPath('notify-send');
  if (notifySend && hasSessionBus(env)) return { choice: { kind: 'notify-send' }, reason: 'notify-send and a session bus', available: true };
  // Under WSL a Linux notify-send rarely has a notification service to talk to: Windows shows the toast.
  if (wsl) return { choice: { kind: 'windows', wsl: true }, reason: 'WSL', available: onPath(powershell) };
  if (notifySend) return { choice: { kind: 'notify-send' }, reason: 'notify-send, but no session bus (DBUS_SESSION_BUS_ADDRESS)', available: false };
  return { choice: { kind: 'none' }, reason: 'no notify-send on PATH (apt-get install libnotify-bin)', available: false };
}

/** A PowerShell single-quoted string literal (a quote is doubled; nothing else is special in one). */
function powerShellString(s: string): string {
  return `'${s.replace(/['\u2018\u2019\u201a\u201b]/gu, "''")}'`;
}

/** The PowerShell program that shows one toast with `title` and `body` (ToastText02: a bold line and text). */
export function windowsToastScript(title: string, body: string): string {
  return [
    "$ErrorActionPreference = 'Stop'",
    '[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] | Out-Null',
    '$x = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)',
    "$t = $x.GetElementsByTagName('text')",
    `$t.Item(0).AppendChild($x.CreateTextNode(${powerShellString(title)})) | Out-Null`,
    `$t.Item(1).AppendChild($x.CreateTextNode(${powerShellString(body)})) | Out-Null`,
    `[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier(${powerShellString(POWERSHELL_APP_ID)}).Show([Windows.UI.Notifications.ToastNotification]::new($x))`,
  ].join('\n');
}

/** Text as it reads in the notification body's markup (a subset of HTML): its own characters, never tags. */
function escapeMarkup(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The exact command that shows one notification, or null for `none`. */
export function notifierCommand(choice: NotifierChoice, title: string, body: string): NotifierCommand | null {
  switch (choice.kind) {
    case 'notify-send':
      // `--` ends the options: a title that starts with '-' is still a title. notify-send reads C escapes in
      // the body (g_strcompress: `\n` would become a line break), so a backslash goes doubled; and most
      // notification services read the body as markup (`<b>`, `<a href>`, `<img src>`), so &, < and > go as
      // entities. The title (the summary) is plain text by the specification: escaped, it would show `&lt;`.
      return { file: 'notify-send', args: [`--app-name=${NOTIFY_APP_NAME}`, '--', title, escapeMarkup(body.replaceAll('\\', '\\\\'))] };
    case 'macos':
      // The text as the run handler's arguments, never in the script's source; `--` ends osascript's options.
      return {
        file: 'osascript',
        args: ['-e', 'on run argv', '-e', 'display notification (item 2 of argv) with title (item 1 of argv)', '-e', 'end run', '--', title, body],
      };
    case 'windows':
      // -EncodedCommand (UTF-16LE, base64): no argument translation between WSL and Windows, no execution policy.
      return {
        file: 'powershell.exe',
        args: ['-NoProfile', '-NonInteractive', '-EncodedCommand', Buffer.from(windowsToastScript(title, body), 'utf16le').toString('base64')],
      };
    case 'command':
      // `--` first: a title or body that starts with '-' is not an option of the operator's command.
      return { file: choice.argv[0]!, args: [...choice.argv.slice(1), '--', title, body] };
    case 'none':
      return null;
    default: {
      const never: never = choice;
      throw new TypeError(`unexpected notifier ${JSON.stringify(never)}`);
    }
  }
}

/** A short name for notices, the log and doctor. */
function notifierName(choice: NotifierChoice): string {
  switch (choice.kind) {
    case 'notify-send':
      return 'notify-send';
    case 'macos':
      return 'osascript (macOS)';
    case 'windows':
      return choice.wsl ? 'PowerShell toast (WSL)' : 'PowerShell toast';
    case 'command':
      return `command ${choice.argv[0]!}`;
    case 'none':
      return 'none';
    default: {
      const never: never = choice;
      throw new TypeError(`unexpected notifier ${JSON.stringify(never)}`);
    }
  }
}

export interface Notifier {
  readonly selection: NotifierSelection;
  readonly name: string;
  /** Shows one notification; rejects with E_NOTIFIER_FAILED (missing program, non-zero exit, timeout). */
  notify(title: string, body: string): Promise<void>;
}

/** Whether `file` is an executable on PATH (or a path to one). */
function onPathIn(env: Readonly<Record<string, string | undefined>>): (file: string) => boolean {
  return (file) => {
    const candidates = file.includes('/')
      ? [file]
      : (env['PATH'] ?? '')
          .split(delimiter)
          .filter((d) => d !== '')
          .map((d) => join(d, file));
    return candidates.some((p) => {
      try {
        accessSync(p, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  };
}

export interface NotifierOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  readonly wsl?: boolean;
  readonly timeoutMs?: number;
}

/** The host's notifier, chosen from the environment; throws E_NOTIFIER_CONFIG for a bad JACKIN_NOTIFIER. */
export function createNotifier(options: NotifierOptions = {}): Notifier {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const selection = chooseNotifier({ env, platform, wsl: options.wsl ?? detectWsl(env as NodeJS.ProcessEnv), onPath: onPathIn(env) });
  const name = notifierName(selection.choice);
  const timeoutMs = options.timeoutMs ?? NOTIFIER_TIMEOUT_MS;
  return {
    selection,
    name,
    notify: (title, body) => {
      const cmd = notifierCommand(selection.choice, title, body);
      if (cmd === null) return Promise.reject(new JackinError('E_NOTIFIER_FAILED', `no desktop notifier (${selection.reason})`));
      return run(cmd, env, timeoutMs);
    },
  };
}

function run(cmd: NotifierCommand, env: Readonly<Record<string, string | undefined>>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.file, [...cmd.args], { stdio: ['ignore', 'ignore', 'pipe'], env: env as NodeJS.ProcessEnv });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += s.slice(0, MAX_STDERR_BYTES - stderr.length);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new JackinError('E_NOTIFIER_FAILED', `${cmd.file} did not finish within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      reject(
        new JackinError('E_NOTIFIER_FAILED', missing ? `${cmd.file} is not installed or not on PATH` : `${cmd.file} could not start: ${e.message}`, {
          cause: e,
        }),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else {
        // What it printed goes in the cause only: a notifier may echo its arguments, the program's text.
        const said = stderr.trim().split('\n')[0] ?? '';
        reject(new JackinError('E_NOTIFIER_FAILED', `${cmd.file} failed (${signal ?? `exit ${code}`})`, said === '' ? {} : { cause: new Error(said) }));
      }
    });
  });
}

/** Where program notifications go (JACKIN_NOTIFY; notify/notify-feature.ts). */
export type NotifyMode = 'desktop' | 'terminal' | 'both' | 'deny';

/** JACKIN_NOTIFY as a mode (an off-word is deny), or null when unset (the default depends on the notifier); throws E_BAD_NOTIFY_MODE. */
export function notifyModeFromEnv(env: Readonly<Record<string, string | undefined>>): NotifyMode | null {
  const v = (env['JACKIN_NOTIFY'] ?? '').trim().toLowerCase();
  if (v === '') return null;
  if (isOffWord(v)) return 'deny';
  if (v === 'desktop' || v === 'terminal' || v === 'both') return v;
  throw new JackinError('E_BAD_NOTIFY_MODE', `JACKIN_NOTIFY=${env['JACKIN_NOTIFY']} is not a mode; use desktop, terminal, both or deny`);
}

/** The mode in effect: JACKIN_NOTIFY, else desktop when the notifier can answer, else terminal. */
export function effectiveNotifyMode(env: Readonly<Record<string, string | undefined>>, notifier: Pick<Notifier, 'selection'> | null): NotifyMode {
  return notifyModeFromEnv(env) ?? (notifier?.selection.available === true ? 'desktop' : 'terminal');
}

/** JACKIN_NOTIFY_BELL=unfocused (or an on-word): a bell while the terminal is unfocused notifies. */
export function bellWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  return envSwitch(env, 'JACKIN_NOTIFY_BELL');
}
