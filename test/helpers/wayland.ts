/**
 * A real headless Wayland compositor for clipboard tests: sway with the headless backend and the pixman
 * renderer, run as an unprivileged user (sway refuses to run as root), and `wl-copy` as that user owning the
 * clipboard. Needs Debian's sway and wl-clipboard, and root to create the user; a missing piece fails the
 * test with the reason, never skips it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from './poll.ts';
import { stopChild } from './stop-child.ts';
import { testRunEnv } from './test-run.ts';

const USER = 'jackin-wayland';

export interface Wayland {
  /** Absolute path of the compositor socket: a valid WAYLAND_DISPLAY for any client that can reach it. */
  display: string;
  runtimeDir: string;
  /** The `wl-copy` processes waylandCopy started (each serves the clipboard until replaced), stopped by stop(). */
  readonly owners: ChildProcess[];
  stop(): Promise<void>;
}

function ids(): { uid: number; gid: number } {
  let r = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  if (r.status !== 0) {
    const add = spawnSync('useradd', ['--system', '--create-home', USER], { encoding: 'utf8' });
    if (add.status !== 0) throw new Error(`cannot create user ${USER} for the Wayland compositor (needs root): ${add.stderr}`);
    r = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  }
  const g = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export async function startWayland(): Promise<Wayland> {
  for (const tool of ['sway', 'wl-copy', 'wl-paste']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      throw new Error(`${tool} is not installed: apt-get install sway wl-clipboard`);
    }
  }
  const { uid, gid } = ids();
  const runtimeDir = mkdtempSync(join(tmpdir(), 'jackin-wl-'));
  chownSync(runtimeDir, uid, gid);
  chmodSync(runtimeDir, 0o700);
  const config = join(runtimeDir, 'sway.conf');
  writeFileSync(config, '');
  chownSync(config, uid, gid);
  const env = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: runtimeDir,
    XDG_RUNTIME_DIR: runtimeDir,
    WLR_BACKENDS: 'headless',
    WLR_RENDERER: 'pixman',
    WLR_LIBINPUT_NO_DEVICES: '1',
    // The run's marker only: its TMPDIR belongs to root, and this user cannot write there.
    JACKIN_TEST_RUN: testRunEnv()['JACKIN_TEST_RUN'] ?? '',
  };
  const sway = spawn('sway', ['-c', config], { uid, gid, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  sway.stderr!.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-4000)));
  const socket = await pollUntil(
    'the sway socket',
    () => {
      if (sway.exitCode !== null) throw new Error(`sway exited with ${sway.exitCode}: ${log}`);
      return readdirSync(runtimeDir).find((n) => /^wayland-\d+$/.test(n));
    },
    { timeoutMs: 15_000, last: () => log },
  );
  const owners: ChildProcess[] = [];
  return {
    display: join(runtimeDir, socket),
    runtimeDir,
    owners,
    async stop() {
      // wl-copy keeps what it serves in a directory of its own under /tmp (the path is built in) and
      // removes it only when it loses the selection, not on a signal: clear the selection first, so the
      // owner exits by itself and cleans up, then stop whatever is left, by pid.
      spawnSync('wl-copy', ['--clear'], { uid, gid, env: { ...env, WAYLAND_DISPLAY: join(runtimeDir, socket) }, stdio: 'ignore', timeout: 5000 });
      await Promise.all(
        owners.map((c) =>
          c.exitCode === null && c.signalCode === null
            ? pollUntil('wl-copy to give up the selection', () => c.exitCode !== null || c.signalCode !== null, { timeoutMs: 5000 }).catch(() => undefined)
            : undefined,
        ),
      );
      await Promise.all(owners.map((c) => stopChild(c)));
      await stopChild(sway);
      rmSync(runtimeDir, { recursive: true, force: true });
    },
  };
}

/** Makes `data` the clipboard's content as `type`, owned by a wl-copy of the compositor's user. */
export async function waylandCopy(w: Wayland, type: string, data: Buffer): Promise<void> {
  const { uid, gid } = ids();
  // In the foreground (no fork), so the process serving the clipboard is the one whose pid we hold.
  const child = spawn('wl-copy', ['--foreground', '--type', type], {
    uid,
    gid,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      XDG_RUNTIME_DIR: w.runtimeDir,
      WAYLAND_DISPLAY: w.display,
      JACKIN_TEST_RUN: testRunEnv()['JACKIN_TEST_RUN'] ?? '',
    },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  w.owners.push(child);
  child.stdin!.end(data);
  await pollUntil(`the Wayland clipboard to offer ${type}`, () => {
    if (child.exitCode !== null) throw new Error(`wl-copy exited with ${child.exitCode}`);
    const r = spawnSync('wl-paste', ['--list-types'], { env: { ...process.env, WAYLAND_DISPLAY: w.display, XDG_RUNTIME_DIR: w.runtimeDir }, encoding: 'utf8' });
    return r.status === 0 && r.stdout.split('\n').includes(type);
  });
}
