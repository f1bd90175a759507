/**
 * A real freedesktop notification service for tests: a private session bus (`dbus-daemon --session` on a
 * socket in a temporary directory) with `dunst` (Debian packages: dbus-daemon, dunst, libnotify-bin for
 * notify-send) on a private X server, configured with one rule whose script records what the service
 * received: the application name, the summary (title) and the body, one per line. Every process started
 * here is stopped by its own pid, and the directory removed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from './poll.ts';
import { stopChild } from './stop-child.ts';
import { removeTestDir } from './test-run.ts';
import { shellQuote } from './tmux.ts';
import { startXvfb } from './xvfb.ts';

interface ReceivedNotification {
  appName: string;
  summary: string;
  body: string;
}

export interface NotificationService {
  /** The session bus address notify-send must be given (DBUS_SESSION_BUS_ADDRESS). */
  readonly address: string;
  /** An environment with this bus and display, for a process that notifies. */
  readonly env: Record<string, string>;
  received(): ReceivedNotification[];
  stop(): Promise<void>;
}

export async function startNotificationService(): Promise<NotificationService> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-notify-'));
  const x = await startXvfb();
  const log = join(dir, 'received.txt');
  const script = join(dir, 'record');
  // dunst runs a rule's script with: appname summary body icon urgency. A NUL-free record per line each.
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n%s\\n%s\\n' "$1" "$2" "$3" >> ${shellQuote(log)}\n`);
  chmodSync(script, 0o755);
  mkdirSync(join(dir, 'config', 'dunst'), { recursive: true });
  writeFileSync(join(dir, 'config', 'dunst', 'dunstrc'), `[global]\n    monitor = 0\n[record]\n    appname = "*"\n    script = ${script}\n`);
  const address = `unix:path=${join(dir, 'bus')}`;
  const bus = spawn('dbus-daemon', ['--session', '--nofork', '--nopidfile', `--address=${address}`], { stdio: 'ignore' });
  // XDG_CONFIG_HOME: a dunst the bus might activate by itself reads the same rule.
  const env: Record<string, string> = { DBUS_SESSION_BUS_ADDRESS: address, DISPLAY: x.display, XDG_CONFIG_HOME: join(dir, 'config') };
  const daemonEnv = { ...process.env, ...env };
  delete daemonEnv.WAYLAND_DISPLAY;
  let dunst: ReturnType<typeof spawn> | null = null;
  const stop = async (): Promise<void> => {
    if (dunst !== null) await stopChild(dunst);
    await stopChild(bus);
    await x.stop();
    removeTestDir(dir);
  };
  try {
    await pollUntil('the private session bus', () => existsSync(join(dir, 'bus')));
    dunst = spawn('dunst', ['-config', join(dir, 'config', 'dunst', 'dunstrc')], { env: daemonEnv, stdio: 'ignore' });
    await pollUntil('dunst to own org.freedesktop.Notifications', () => {
      if (dunst?.exitCode !== null) throw new Error(`dunst exited with ${String(dunst?.exitCode)}`);
      const r = spawnSync(
        'dbus-send',
        [
          '--session',
          '--print-reply',
          '--dest=org.freedesktop.DBus',
          '/org/freedesktop/DBus',
          'org.freedesktop.DBus.NameHasOwner',
          'string:org.freedesktop.Notifications',
        ],
        { env: daemonEnv, encoding: 'utf8' },
      );
      return r.status === 0 && /boolean true/.test(r.stdout);
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    address,
    env,
    received: () => {
      if (!existsSync(log)) return [];
      const lines = readFileSync(log, 'utf8').split('\n');
      const out: ReceivedNotification[] = [];
      for (let i = 0; i + 2 < lines.length; i += 3) out.push({ appName: lines[i]!, summary: lines[i + 1]!, body: lines[i + 2]! });
      return out;
    },
    stop,
  };
}

export interface SessionBus {
  /** An environment with this bus (DBUS_SESSION_BUS_ADDRESS), for a process that notifies. */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A private session bus with no notification service on it and none it could start (its configuration
 * names no service directories, so the dunst a desktop package installs is never activated): notify-send
 * finds a bus, so the default choice picks it, and every notification fails (ServiceUnknown).
 */
export async function startBusWithoutNotifications(): Promise<SessionBus> {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-bus-'));
  const config = join(dir, 'bus.conf');
  writeFileSync(
    config,
    [
      '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">',
      `<busconfig><type>session</type><listen>unix:path=${join(dir, 'bus')}</listen><auth>EXTERNAL</auth>`,
      '<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>',
    ].join('\n'),
  );
  const bus = spawn('dbus-daemon', [`--config-file=${config}`, '--nofork', '--nopidfile'], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    await stopChild(bus);
    removeTestDir(dir);
  };
  try {
    await pollUntil('the private session bus', () => {
      if (bus.exitCode !== null) throw new Error(`dbus-daemon exited with ${String(bus.exitCode)}`);
      return existsSync(join(dir, 'bus'));
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { env: { DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'bus')}` }, stop };
}
