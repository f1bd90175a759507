/**
 * `jackin doctor`: what this host would use for each affordance, whether it works, and the fix for each
 * problem. Every check is independent and bounded in time; none changes anything.
 */
import { accessSync, constants as fsConstants, existsSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, isAbsolute, join } from 'node:path';
import { describeError } from '../../errors.ts';
import { linksEnabled } from '../../policy/url-safety.ts';
import { XCLIP_INSTALL, WL_PASTE_INSTALL, xclipTargetsArgv, wlPasteTypesArgv } from '../platform/clipboard/argv.ts';
import { chooseBackend, detectWsl } from '../platform/clipboard/select.ts';
import { runHelper } from '../platform/clipboard/run-helper.ts';
import { findDownloadsDir } from '../platform/download-dir.ts';
import { scannerOptionsFromEnv } from '../terminal/input-scan.ts';
import { describeState, jackinHome, listInstances } from './instances.ts';
import { splitCommandLine } from '../platform/opener.ts';
import { bellWanted, createNotifier, effectiveNotifyMode } from '../platform/notifier.ts';
import { inertText } from '../../ui/inert-text.ts';
import { probeEngines, type EngineProbe } from '../../transport/container-engine.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { hostLibraries, LOADER_NAME, ptyBinary, type LentFile } from './host-libraries.ts';
import { listRuntimes, runtimesDir, type RuntimeEntry } from '../runtime/runtime.ts';

type CheckStatus = 'ok' | 'warning' | 'error';

export interface Check {
  /** What was checked: clipboard, opener, downloads, keys, engines, instance:<name>. */
  name: string;
  status: CheckStatus;
  /** What would be used, or what was found. */
  detail: string;
  /** How to fix it, when status is not ok. */
  fix?: string;
}

/** A clipboard probe must answer quickly; a stuck clipboard owner is itself a finding. */
const DOCTOR_PROBE_TIMEOUT_MS = 3000;

/** The first executable named `name` on PATH, or null. */
function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (isAbsolute(name)) return existsSync(name) ? name : null;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = join(dir, name);
    try {
      accessSync(p, fsConstants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

async function checkClipboard(env: NodeJS.ProcessEnv): Promise<Check> {
  let choice;
  try {
    choice = chooseBackend({ env, platform: process.platform, wsl: detectWsl(env) });
  } catch (e) {
    return {
      name: 'clipboard',
      status: 'error',
      detail: describeError(e),
      fix: 'set JACKIN_CLIPBOARD to wl-paste, xclip, macos, windows, none or command:<argv>',
    };
  }
  const { choice: c, reason } = choice;
  const probe = async (cmd: { file: string; args: readonly string[] }, install: string): Promise<Check> => {
    if (onPath(cmd.file, env) === null) {
      return { name: 'clipboard', status: 'error', detail: `${c.kind} (${reason}), but ${cmd.file} is not installed`, fix: install };
    }
    try {
      const r = await runHelper(cmd, { timeoutMs: DOCTOR_PROBE_TIMEOUT_MS, maxBytes: 64 * 1024, installHint: install, env });
      if (r.exitCode === 0) {
        const types = r.stdout
          .toString('utf8')
          .split('\n')
          .filter((l) => l.startsWith('image/'));
        const now = types.length > 0 ? `; the clipboard offers ${types.join(', ')} now` : '; no image on the clipboard now';
        return { name: 'clipboard', status: 'ok', detail: `${c.kind} (${reason}) works${now}` };
      }
      const said = r.stderr.trim().split('\n')[0] ?? '';
      // An empty clipboard makes xclip exit non-zero too; that is not a fault.
      if (/target .* not available|no selection|nothing is copied|No suitable type/i.test(said)) {
        return { name: 'clipboard', status: 'ok', detail: `${c.kind} (${reason}) works; the clipboard is empty now` };
      }
      return {
        name: 'clipboard',
        status: 'error',
        detail: `${c.kind} (${reason}) failed: ${said || `exit status ${r.exitCode}`}`,
        fix:
          c.kind === 'xclip'
            ? 'check DISPLAY points at a running X server (or use JACKIN_CLIPBOARD)'
            : 'check WAYLAND_DISPLAY points at a running compositor (or use JACKIN_CLIPBOARD)',
      };
    } catch (e) {
      return { name: 'clipboard', status: 'error', detail: `${c.kind} (${reason}): ${describeError(e)}`, fix: install };
    }
  };
  switch (c.kind) {
    case 'xclip':
      return probe(xclipTargetsArgv(), XCLIP_INSTALL);
    case 'wl-paste':
      return probe(wlPasteTypesArgv(), WL_PASTE_INSTALL);
    case 'macos':
      return onPath('osascript', env)
        ? { name: 'clipboard', status: 'ok', detail: `macOS helper (${reason})` }
        : { name: 'clipboard', status: 'error', detail: 'osascript not found', fix: 'osascript ships with macOS in /usr/bin; check PATH' };
    case 'windows': {
      const ps = c.wsl ? 'powershell.exe' : 'powershell';
      return onPath(ps, env)
        ? { name: 'clipboard', status: 'ok', detail: `Windows helper via ${ps} (${reason})` }
        : {
            name: 'clipboard',
            status: 'error',
            detail: `${ps} not found (${reason})`,
            fix: 'make Windows PowerShell reachable on PATH (WSL: enable appendWindowsPath)',
          };
    }
    case 'command': {
      const file = c.argv[0] ?? '';
      return onPath(file, env)
        ? { name: 'clipboard', status: 'ok', detail: `command ${c.argv.join(' ')} (${reason})` }
        : { name: 'clipboard', status: 'error', detail: `command ${file} not found (${reason})`, fix: 'fix JACKIN_CLIPBOARD=command:<argv>' };
    }
    case 'none':
      return {
        name: 'clipboard',
        status: 'warning',
        detail: `disabled (${reason}); Ctrl+V goes to the program`,
        fix: 'unset JACKIN_CLIPBOARD to paste images',
      };
    case 'terminal':
      return {
        name: 'clipboard',
        status: 'ok',
        detail: `your terminal, through the kitty clipboard protocol (OSC 5522; kitty and Ghostty speak it) (${reason})`,
      };
    case 'unavailable':
      return {
        name: 'clipboard',
        status: 'warning',
        detail: `no clipboard reachable (${reason})`,
        fix: 'run jackin where DISPLAY or WAYLAND_DISPLAY is set, or set JACKIN_CLIPBOARD=command:<argv>',
      };
    default: {
      const never: never = c;
      throw new TypeError(`unexpected backend ${JSON.stringify(never)}`);
    }
  }
}

/** Where a display or bus socket would answer: a unix socket path ('\0' first: Linux's abstract name) or a TCP port. */
type SocketAddress = { path: string } | { host: string; port: number };

/** Whether something accepts a connection at `to` within the probe timeout (an X server, a compositor). */
function socketAnswers(to: SocketAddress): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = 'path' in to ? connect({ path: to.path }) : connect({ host: to.host, port: to.port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), DOCTOR_PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** What the opener check asks of the host; tests give a macOS host, or displays that answer or not. */
export interface OpenerProbe {
  readonly platform: NodeJS.Platform;
  readonly answers: (to: SocketAddress) => Promise<boolean>;
}

/** Where X display `display` listens: its unix socket (path, then the abstract name), or TCP for host:N (ssh -X). */
function xDisplaySockets(display: string): SocketAddress[] | null {
  const m = /^(.*):(\d+)(?:\.\d+)?$/u.exec(display);
  if (m === null) return null;
  const [, host = '', n = '0'] = m;
  if (host === '' || host === 'unix') return [{ path: `/tmp/.X11-unix/X${n}` }, { path: `\0/tmp/.X11-unix/X${n}` }];
  if (host.startsWith('/')) return [{ path: display }];
  return [{ host, port: 6000 + Number(n) }];
}

/** How xdg-open could show a link here: a display that answers, or BROWSER; else why not. */
async function linuxReach(env: NodeJS.ProcessEnv, probe: OpenerProbe): Promise<{ via: string } | { missing: string }> {
  const problems: string[] = [];
  const wayland = env['WAYLAND_DISPLAY'] ?? '';
  if (wayland !== '') {
    const runtime = env['XDG_RUNTIME_DIR'] ?? '';
    const path = isAbsolute(wayland) ? wayland : runtime === '' ? null : join(runtime, wayland);
    if (path === null) problems.push(`WAYLAND_DISPLAY=${wayland} but no XDG_RUNTIME_DIR to find it in`);
    else if (await probe.answers({ path })) return { via: `Wayland display ${wayland}` };
    else problems.push(`nothing answers on the Wayland socket ${path}`);
  }
  const display = env['DISPLAY'] ?? '';
  if (display !== '') {
    const sockets = xDisplaySockets(display);
    let answered = false;
    for (const s of sockets ?? []) {
      if (await probe.answers(s)) {
        answered = true;
        break;
      }
    }
    if (answered) return { via: `X display ${display}` };
    problems.push(sockets === null ? `DISPLAY=${display} is not a display name` : `no X server answers on DISPLAY=${display}`);
  }
  // xdg-open with no desktop runs $BROWSER (a colon-separated list; %s stands for the link).
  const browsers = (env['BROWSER'] ?? '').split(':').filter((b) => b.trim() !== '');
  for (const b of browsers) {
    let file: string | undefined;
    try {
      [file] = splitCommandLine(b.replaceAll('%s', ''));
    } catch {
      continue;
    }
    if (file !== undefined && onPath(file, env) !== null) return { via: `BROWSER=${env['BROWSER']}` };
  }
  if (browsers.length > 0) problems.push(`BROWSER=${env['BROWSER']} names no installed command`);
  if (problems.length === 0) problems.push('no DISPLAY, WAYLAND_DISPLAY or BROWSER is set');
  return { missing: problems.join('; ') };
}

async function checkOpener(env: NodeJS.ProcessEnv, probe: OpenerProbe = { platform: process.platform, answers: socketAnswers }): Promise<Check> {
  if (!linksEnabled(env)) {
    return {
      name: 'opener',
      status: 'warning',
      detail: `link opening is disabled (JACKIN_OPEN_LINKS=${env['JACKIN_OPEN_LINKS']})`,
      fix: 'unset JACKIN_OPEN_LINKS to open links',
    };
  }
  const custom = env['JACKIN_OPENER'];
  if (custom !== undefined && custom.trim() !== '') {
    try {
      const [file] = splitCommandLine(custom);
      if (file === undefined || onPath(file, env) === null) {
        return {
          name: 'opener',
          status: 'error',
          detail: `JACKIN_OPENER ${JSON.stringify(custom)}: ${file ?? ''} not found`,
          fix: 'point JACKIN_OPENER at an installed command',
        };
      }
      return { name: 'opener', status: 'ok', detail: `JACKIN_OPENER: ${custom}` };
    } catch (e) {
      return { name: 'opener', status: 'error', detail: describeError(e), fix: 'fix the quoting of JACKIN_OPENER' };
    }
  }
  const { platform } = probe;
  const platformOpener = platform === 'darwin' ? 'open' : platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  // macOS's open and Windows' shell always have a desktop to open on.
  if (platform === 'darwin' || platform === 'win32') return { name: 'opener', status: 'ok', detail: `platform opener ${platformOpener}` };
  // xdg-open needs a display to start a browser on, or BROWSER: over SSH there is usually neither, and every
  // link failed to open although doctor said the opener was fine.
  const reach = await linuxReach(env, probe);
  if ('missing' in reach) {
    const ssh = (env['SSH_CONNECTION'] ?? env['SSH_TTY'] ?? '') !== '';
    return {
      name: 'opener',
      status: 'warning',
      detail: `xdg-open has nowhere to open a link${ssh ? ' (an SSH session)' : ''}: ${reach.missing}`,
      fix:
        'set BROWSER to a command that opens its argument (a text browser such as w3m, or a script that hands the link to your own machine), or JACKIN_OPENER; ' +
        `${ssh ? 'ssh -X gives a display; ' : ''}a link that does not open can be copied instead (its notice says how), and a terminal that opens OSC 8 links itself opens them on your side`,
    };
  }
  // The open package ships its own xdg-open script, so a missing system one is only a warning.
  if (onPath(platformOpener, env) === null) {
    return {
      name: 'opener',
      status: 'warning',
      detail: `xdg-open not on PATH; the copy bundled with jackin is used (through ${reach.via})`,
      fix: 'install xdg-utils (apt-get install xdg-utils) so links open in your default browser',
    };
  }
  return { name: 'opener', status: 'ok', detail: `platform opener ${platformOpener}, through ${reach.via}` };
}

const NOTIFICATIONS_NAME = 'org.freedesktop.Notifications';

/**
 * Whether the session bus has a notification service: one running (NameHasOwner), or one the bus starts on
 * the first notification (ListActivatableNames). Asked with dbus-send, else gdbus; null when neither is
 * installed or the bus does not answer (then nothing is known).
 */
async function notificationService(env: NodeJS.ProcessEnv): Promise<'running' | 'activatable' | 'none' | null> {
  const ask = async (method: string, arg: string | null): Promise<string | null> => {
    const cmd =
      onPath('dbus-send', env) !== null
        ? {
            file: 'dbus-send',
            args: [
              '--session',
              '--print-reply',
              '--dest=org.freedesktop.DBus',
              '/org/freedesktop/DBus',
              `org.freedesktop.DBus.${method}`,
              ...(arg === null ? [] : [`string:${arg}`]),
            ],
          }
        : onPath('gdbus', env) !== null
          ? {
              file: 'gdbus',
              args: [
                'call',
                '--session',
                '--dest',
                'org.freedesktop.DBus',
                '--object-path',
                '/org/freedesktop/DBus',
                '--method',
                `org.freedesktop.DBus.${method}`,
                ...(arg === null ? [] : [arg]),
              ],
            }
          : null;
    if (cmd === null) return null;
    try {
      const r = await runHelper(cmd, { timeoutMs: DOCTOR_PROBE_TIMEOUT_MS, maxBytes: 256 * 1024, installHint: 'apt-get install dbus-bin', env });
      return r.exitCode === 0 ? r.stdout.toString('utf8') : null;
    } catch {
      return null;
    }
  };
  const owner = await ask('NameHasOwner', NOTIFICATIONS_NAME);
  if (owner === null) return null;
  if (/boolean true|\(true,\)/u.test(owner)) return 'running';
  const activatable = await ask('ListActivatableNames', null);
  if (activatable === null) return null;
  return activatable.includes(`"${NOTIFICATIONS_NAME}"`) || activatable.includes(`'${NOTIFICATIONS_NAME}'`) ? 'activatable' : 'none';
}

/** Which desktop notifier program notifications would use (JACKIN_NOTIFY, JACKIN_NOTIFIER), without showing one. */
async function checkNotifier(env: NodeJS.ProcessEnv): Promise<Check> {
  let notifier;
  let mode;
  try {
    notifier = createNotifier({ env });
    mode = effectiveNotifyMode(env, notifier);
  } catch (e) {
    return {
      name: 'notifications',
      status: 'error',
      detail: `${describeError(e)}; notifications go to the terminal`,
      fix: 'set JACKIN_NOTIFY to desktop, terminal, both or deny, and JACKIN_NOTIFIER to notify-send, macos, windows, none or command:<argv>',
    };
  }
  const { selection } = notifier;
  const bell = bellWanted(env) ? '; the bell notifies while the terminal is unfocused' : '';
  if (mode === 'deny') return { name: 'notifications', status: 'ok', detail: `off (JACKIN_NOTIFY=${env['JACKIN_NOTIFY']})` };
  if (mode === 'terminal') {
    const why =
      env['JACKIN_NOTIFY'] !== undefined && env['JACKIN_NOTIFY'].trim() !== ''
        ? 'JACKIN_NOTIFY=terminal'
        : `no desktop notifier answers: ${notifier.name} (${selection.reason})`;
    return {
      name: 'notifications',
      status: 'ok',
      detail: `to the terminal, inert (${why})`,
      ...(why.startsWith('no desktop')
        ? { fix: 'for desktop notifications: apt-get install libnotify-bin with a notification service, or set JACKIN_NOTIFIER=command:<argv>' }
        : {}),
    };
  }
  if (!selection.available) {
    return {
      name: 'notifications',
      status: 'error',
      detail: `${mode} with ${notifier.name} (${selection.reason}), which cannot answer`,
      fix: 'install the notifier (apt-get install libnotify-bin), or set JACKIN_NOTIFIER / JACKIN_NOTIFY=terminal',
    };
  }
  const through = `${mode === 'both' ? 'desktop and terminal' : 'desktop'} through ${notifier.name} (${selection.reason})`;
  // A session bus is not a notification service: on a bare bus (a server, a container) every notify-send failed.
  const service = selection.choice.kind === 'notify-send' ? await notificationService(env) : null;
  if (service === 'none') {
    return {
      name: 'notifications',
      status: 'warning',
      detail: `${through}, but nothing on the session bus shows notifications (${NOTIFICATIONS_NAME} has no owner)`,
      fix: 'start a notification service (your desktop has one; dunst or mako on a bare window manager), or set JACKIN_NOTIFY=terminal',
    };
  }
  return {
    name: 'notifications',
    status: 'ok',
    detail: `${through}${service === 'activatable' ? '; the bus starts its notification service on demand' : ''}${bell}`,
  };
}

async function checkDownloads(env: NodeJS.ProcessEnv): Promise<Check> {
  try {
    const dir = await findDownloadsDir(env);
    const target = join(dir, 'jackin');
    let probe = target;
    while (!existsSync(probe)) {
      const parent = join(probe, '..');
      if (parent === probe) break;
      probe = parent;
    }
    try {
      accessSync(probe, fsConstants.W_OK);
    } catch {
      return { name: 'downloads', status: 'error', detail: `${target} (not writable: ${probe})`, fix: 'set JACKIN_DOWNLOAD_DIR to a writable directory' };
    }
    return { name: 'downloads', status: 'ok', detail: `exports go to ${target}/<instance>/` };
  } catch (e) {
    return { name: 'downloads', status: 'error', detail: describeError(e), fix: 'set JACKIN_DOWNLOAD_DIR' };
  }
}

function checkKeys(env: NodeJS.ProcessEnv): Check {
  try {
    const o = scannerOptionsFromEnv(env);
    const paste = o.pasteKey === null ? 'off' : (o.pasteKey?.spec ?? 'ctrl+v');
    const palette = o.paletteKey === null ? 'off' : (o.paletteKey?.spec ?? 'ctrl+\\');
    return { name: 'keys', status: 'ok', detail: `palette ${palette}, image paste ${paste}` };
  } catch (e) {
    return { name: 'keys', status: 'error', detail: describeError(e), fix: 'fix JACKIN_PASTE_KEY / JACKIN_PALETTE_KEY (e.g. ctrl+v, ctrl+g, none)' };
  }
}

async function checkInstances(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const home = jackinHome(env);
  const list = await listInstances(home);
  if (list.length === 0) {
    return [{ name: 'instances', status: 'ok', detail: `none under ${join(home, 'sockets')} (start one with jackin run)` }];
  }
  return list.map((i): Check => {
    if (i.state === 'live') {
      const attached = i.attached === null ? '' : i.attached ? ', attached' : ', not attached';
      return { name: `instance:${i.name}`, status: 'ok', detail: `reached through its socket ${i.socket}${attached}` };
    }
    if (i.state === 'inaccessible') {
      return {
        name: `instance:${i.name}`,
        status: 'error',
        detail: `${describeState(i)}: ${i.socket} refuses your user, so it cannot be told live or stale; do not remove it while its capsule may run`,
        fix: 'start the container with --user "$(id -u):$(id -g)" (jackin run --image does), or update jackin-capsule in the image (a capsule running as root hands its socket to the owner of the run directory), or check it as that user',
      };
    }
    return {
      name: `instance:${i.name}`,
      status: 'warning',
      detail: `stale: nothing answers on ${i.socket}; for a container, jackin attach ${i.name} --via docker|podman|kubectl`,
      fix: `remove ${i.runDir} if the instance is gone`,
    };
  });
}

/**
 * Pure: what `jackin run --image` can lend a container (`--capsule host`): `lent` is what the host lends
 * (host-libraries.ts), null when it cannot; off Linux the image brings its own capsule.
 */
export function capsuleCheck(platform: NodeJS.Platform, lent: readonly LentFile[] | null): Check {
  if (platform !== 'linux') {
    return {
      name: 'capsule',
      status: 'ok',
      detail: `this host's Node cannot run in a Linux container (${platform}): jackin run --image uses the image's own jackin-capsule (--capsule image)`,
    };
  }
  if (lent === null) {
    return {
      name: 'capsule',
      status: 'warning',
      detail:
        "this host cannot lend its C library (ldd did not list its Node's libraries): jackin run --image runs the capsule on the image's glibc, so a musl or libc-less image stops",
      fix: 'install ldd (Debian and Ubuntu: apt-get install libc-bin), or use glibc images',
    };
  }
  const libraries = lent.filter((l) => l.name !== LOADER_NAME).map((l) => l.name);
  return {
    name: 'capsule',
    status: 'ok',
    detail: `jackin run --image lends this host's Node, its loader and ${libraries.length} libraries (${libraries.join(', ')}): any Linux image runs the capsule, whatever its C library`,
  };
}

/** What this host lends, as run-image-command.ts does. */
async function checkCapsule(): Promise<Check> {
  if (process.platform !== 'linux') return capsuleCheck(process.platform, null);
  const node = realpathSync(process.execPath);
  const pty = ptyBinary(PACKAGE_ROOT);
  return capsuleCheck(process.platform, await hostLibraries(pty === null ? [node] : [node, pty]));
}

/** Pure: the capsule runtimes in the cache (`jackin runtime`), or none and how to fetch one. */
export function runtimeCheck(list: readonly RuntimeEntry[], dir: string): Check {
  const current = list.filter((r) => r.current);
  if (current.length === 0) {
    const older = list.length === 0 ? '' : ` (${list.length} of an older jackin build: jackin runtime rm removes them)`;
    return {
      name: 'runtime',
      status: 'ok',
      detail: `no capsule runtime of this jackin cached under ${dir}${older}: jackin run --image --capsule runtime fetches one from the npm registry at its first use, or jackin runtime fetch [--arch x64|arm64] does now (offline: jackin runtime --help)`,
    };
  }
  const each = current.map((r) => `${r.arch} (Node ${r.nodeVersion}, ${r.codeCache ? 'with' : 'without'} a code cache, ${r.path})`);
  return { name: 'runtime', status: 'ok', detail: `capsule runtimes cached: ${each.join('; ')}` };
}

async function checkRuntimes(env: NodeJS.ProcessEnv): Promise<Check> {
  try {
    return runtimeCheck(await listRuntimes({ env }), runtimesDir(env));
  } catch (e) {
    return {
      name: 'runtime',
      status: 'warning',
      detail: `the capsule runtimes cannot be listed: ${describeError(e)}`,
      fix: 'set JACKIN_CACHE_DIR to a readable directory',
    };
  }
}

/** Pure: the engines check from what each engine said (`jackin run --image` needs one that answers). */
function engineCheck(probes: readonly EngineProbe[]): Check {
  const say = (p: EngineProbe): string =>
    !p.installed
      ? `${p.engine} not installed`
      : p.version !== null
        ? `${p.engine} ${p.version} answers`
        : `${p.engine} installed, its engine does not answer (${p.problem ?? 'no reply'})`;
  const detail = probes.map(say).join('; ');
  if (probes.some((p) => p.version !== null)) {
    // As detectEngine chooses: docker when its engine answers, else podman.
    const pick = probes.find((p) => p.engine === 'docker')?.version != null ? 'docker' : 'podman';
    return { name: 'engines', status: 'ok', detail: `${detail}; jackin run --image uses ${pick} unless given --engine` };
  }
  const installedOnly = probes.filter((p) => p.installed).map((p) => p.engine);
  return {
    name: 'engines',
    status: 'warning',
    detail: `${detail}; jackin run --image cannot start a container (a local jackin run works)`,
    fix: installedOnly.includes('docker')
      ? "start Docker's engine (systemctl start docker, or dockerd as root), or use Podman (apt-get install podman), which needs no daemon"
      : installedOnly.includes('podman')
        ? 'podman is installed but fails: run `podman info` and follow its message'
        : 'install Podman (apt-get install podman) or Docker Engine for jackin run --image',
  };
}

/** Every check; `probe` fakes the host for the opener's (a macOS host in tests). */
export async function runDoctor(env: NodeJS.ProcessEnv = process.env, probe?: OpenerProbe): Promise<Check[]> {
  const [clipboard, opener, notifier, downloads, engines, capsule, runtimes, instances] = await Promise.all([
    checkClipboard(env),
    checkOpener(env, probe),
    checkNotifier(env),
    checkDownloads(env),
    probeEngines(env).then(engineCheck),
    checkCapsule(),
    checkRuntimes(env),
    checkInstances(env),
  ]);
  return [clipboard, opener, notifier, downloads, checkKeys(env), engines, capsule, runtimes, ...instances];
}

const MARK: Record<CheckStatus, string> = { ok: '✓', warning: '!', error: '✗' };

export function formatChecks(checks: readonly Check[]): string {
  return (
    checks
      // Instance names and details come from directories and capsules the host does not control: inert.
      .map((c) => `${MARK[c.status]} ${inertText(c.name)}: ${inertText(c.detail, 1000)}${c.fix === undefined ? '' : `\n    fix: ${inertText(c.fix, 1000)}`}`)
      .join('\n')
      .concat('\n')
  );
}
