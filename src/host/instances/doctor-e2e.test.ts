import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { startBusWithoutNotifications, startNotificationService } from '../../../test/helpers/notification-service.ts';
import { startXvfb } from '../../../test/helpers/xvfb.ts';
import { capsuleCheck, runDoctor, type Check } from './doctor.ts';

function base(t: { after: (fn: () => void) => void }): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'jackin-doctor-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  return { PATH: process.env['PATH'], HOME: home, JACKIN_HOME: join(home, '.jackin'), JACKIN_DOWNLOAD_DIR: join(home, 'dl') };
}
const byName = (checks: Check[], name: string): Check => {
  const c = checks.find((x) => x.name === name);
  assert.ok(c, `check ${name} present in ${JSON.stringify(checks)}`);
  return c;
};

test('doctor: with a real X11 clipboard the xclip backend is found working', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const env = { ...base(t), DISPLAY: x.display };
  const c = byName(await runDoctor(env), 'clipboard');
  assert.equal(c.status, 'ok', JSON.stringify(c));
  assert.match(c.detail, /^xclip .* works/);
});

test('doctor: a missing clipboard tool is an error whose fix is the install command', async (t) => {
  const env = { ...base(t), DISPLAY: ':99', JACKIN_CLIPBOARD: 'xclip', PATH: '/nonexistent' };
  const c = byName(await runDoctor(env), 'clipboard');
  assert.equal(c.status, 'error');
  assert.match(c.fix ?? '', /apt-get install xclip/);
});

test('doctor: over SSH with no clipboard, the clipboard is the operator terminal (OSC 5522)', async (t) => {
  const c = byName(await runDoctor({ ...base(t), SSH_CONNECTION: '10.0.0.1 5000 10.0.0.2 22' }), 'clipboard');
  assert.equal(c.status, 'ok', JSON.stringify(c));
  assert.match(
    c.detail,
    /^your terminal, through the kitty clipboard protocol \(OSC 5522; kitty and Ghostty speak it\) \(no local clipboard and the session is remote/,
  );
});

test('doctor: opener, keys and downloads report their configuration and fixes', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none', JACKIN_OPENER: '/nonexistent/opener --flag', JACKIN_PALETTE_KEY: 'ctrl+v' };
  const checks = await runDoctor(env);
  assert.equal(byName(checks, 'clipboard').status, 'warning');
  const opener = byName(checks, 'opener');
  assert.equal(opener.status, 'error');
  assert.match(opener.fix ?? '', /JACKIN_OPENER/);
  const keys = byName(checks, 'keys');
  assert.equal(keys.status, 'error', 'palette and paste keys may not be the same');
  const dl = byName(checks, 'downloads');
  assert.equal(dl.status, 'ok');
  assert.match(dl.detail, new RegExp(`${env['JACKIN_DOWNLOAD_DIR']}/jackin/<instance>/`));
  const off = byName(await runDoctor({ ...env, JACKIN_OPEN_LINKS: 'OFF' }), 'opener');
  assert.equal(off.status, 'warning');
});

test('doctor: a stale instance is reported with how to reach it and what to remove', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  const dir = join(env['JACKIN_HOME']!, 'sockets', 'gone');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capsule.json'), JSON.stringify({ pid: 1, name: 'gone', program: ['bash'], workspace: '/', startedAt: '' }));
  writeFileSync(join(dir, 'jackin.sock'), '');
  const c = byName(await runDoctor(env), 'instance:gone');
  assert.equal(c.status, 'warning');
  assert.match(c.detail, /--via docker/);
  assert.match(c.fix ?? '', new RegExp(dir));
});

test('doctor: engines: which answer, and what to do when none does (engine stand-ins on PATH; the real podman)', async (t) => {
  const env = base(t);
  const bin = join(env['HOME']!, 'bin');
  mkdirSync(bin);
  const put = (name: string, script: string) => writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  put('docker', 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1');
  const onlyDocker = byName(await runDoctor({ ...env, JACKIN_CLIPBOARD: 'none', PATH: bin }), 'engines');
  assert.equal(onlyDocker.status, 'warning');
  assert.equal(
    onlyDocker.detail,
    'docker installed, its engine does not answer (Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?); podman not installed; jackin run --image cannot start a container (a local jackin run works)',
  );
  assert.match(onlyDocker.fix ?? '', /start Docker's engine/);
  const none = byName(await runDoctor({ ...env, JACKIN_CLIPBOARD: 'none', PATH: '/nonexistent' }), 'engines');
  assert.equal(none.detail, 'docker not installed; podman not installed; jackin run --image cannot start a container (a local jackin run works)');
  assert.match(none.fix ?? '', /apt-get install podman/);
  put('podman', '[ "$1 $2 $3" = "info --format {{.Version.Version}}" ] && echo 4.3.1');
  const both = byName(await runDoctor({ ...env, JACKIN_CLIPBOARD: 'none', PATH: bin }), 'engines');
  assert.equal(both.status, 'ok');
  assert.match(both.detail, /^docker installed, its engine does not answer .*; podman 4\.3\.1 answers; jackin run --image uses podman unless given --engine$/);
  // This machine's real podman (installed by .ci/run) answers.
  const real = byName(await runDoctor({ ...env, JACKIN_CLIPBOARD: 'none' }), 'engines');
  assert.equal(real.status, 'ok', real.detail);
  assert.match(real.detail, /podman \d+\.\d+\.\d+ answers/);
});

test('doctor: says which notifier program notifications would use, and why', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  delete env['DBUS_SESSION_BUS_ADDRESS'];
  const noBus = byName(await runDoctor({ ...env, XDG_RUNTIME_DIR: '/nonexistent-run' }), 'notifications');
  assert.equal(noBus.status, 'ok');
  assert.match(noBus.detail, /^to the terminal, inert \(no desktop notifier answers: notify-send \(notify-send, but no session bus/);
  assert.match(noBus.fix ?? '', /libnotify-bin/);
  const bus = byName(await runDoctor({ ...env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/x', JACKIN_NOTIFY_BELL: 'unfocused' }), 'notifications');
  assert.deepEqual(bus, {
    name: 'notifications',
    status: 'ok',
    detail: 'desktop through notify-send (notify-send and a session bus); the bell notifies while the terminal is unfocused',
  });
  const cmd = byName(await runDoctor({ ...env, JACKIN_NOTIFIER: 'command:/bin/true', JACKIN_NOTIFY: 'both' }), 'notifications');
  assert.equal(cmd.detail, 'desktop and terminal through command /bin/true (JACKIN_NOTIFIER=command:/bin/true)');
  const missing = byName(await runDoctor({ ...env, JACKIN_NOTIFIER: 'command:/nonexistent/n', JACKIN_NOTIFY: 'desktop' }), 'notifications');
  assert.equal(missing.status, 'error');
  assert.equal(byName(await runDoctor({ ...env, JACKIN_NOTIFY: 'deny' }), 'notifications').detail, 'off (JACKIN_NOTIFY=deny)');
  const bad = byName(await runDoctor({ ...env, JACKIN_NOTIFY: 'loud' }), 'notifications');
  assert.equal(bad.status, 'error');
  assert.match(bad.detail, /JACKIN_NOTIFY=loud is not a mode/);
});

test('doctor: the opener needs a display that answers or BROWSER on Linux; with neither (over SSH) it is a warning with the fixes', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  const none = byName(await runDoctor(env), 'opener');
  assert.equal(none.status, 'warning', JSON.stringify(none));
  assert.equal(none.detail, 'xdg-open has nowhere to open a link: no DISPLAY, WAYLAND_DISPLAY or BROWSER is set');
  assert.match(none.fix ?? '', /set BROWSER .* or JACKIN_OPENER; .*copied instead/);
  const ssh = byName(await runDoctor({ ...env, SSH_CONNECTION: '10.0.0.1 50000 10.0.0.2 22' }), 'opener');
  assert.match(ssh.detail, /^xdg-open has nowhere to open a link \(an SSH session\)/);
  assert.match(ssh.fix ?? '', /ssh -X gives a display/);
  // A display name whose server is gone (no socket answers): not a check mark either.
  const gone = byName(await runDoctor({ ...env, DISPLAY: ':987' }), 'opener');
  assert.equal(gone.status, 'warning');
  assert.match(gone.detail, /no X server answers on DISPLAY=:987/);
  const badBrowser = byName(await runDoctor({ ...env, BROWSER: '/nonexistent/browser %s' }), 'opener');
  assert.equal(badBrowser.status, 'warning');
  assert.match(badBrowser.detail, /BROWSER=\/nonexistent\/browser %s names no installed command/);
  const browser = byName(await runDoctor({ ...env, BROWSER: '/nonexistent/b:/bin/true %s' }), 'opener');
  assert.equal(browser.status, 'ok', JSON.stringify(browser));
  assert.match(browser.detail, /through BROWSER=\/nonexistent\/b:\/bin\/true %s$/);
  // macOS's open always has the desktop (the platform is faked; no socket is asked about).
  const mac = byName(await runDoctor(env, { platform: 'darwin', answers: () => Promise.reject(new Error('not asked on macOS')) }), 'opener');
  assert.deepEqual(mac, { name: 'opener', status: 'ok', detail: 'platform opener open' });
});

test('doctor: the opener is fine on an X display that answers (Xvfb) and on a Wayland socket that answers', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  const onX = byName(await runDoctor({ ...env, DISPLAY: x.display }), 'opener');
  assert.equal(onX.status, 'ok', JSON.stringify(onX));
  assert.match(onX.detail, new RegExp(`through X display ${x.display}$`));
  const runtime = mkdtempSync(join(tmpdir(), 'jackin-doctor-run-'));
  t.after(() => rmSync(runtime, { recursive: true, force: true }));
  const compositor = createServer((c) => c.destroy());
  await new Promise<void>((resolve) => compositor.listen(join(runtime, 'wayland-7'), resolve));
  t.after(() => compositor.close());
  const onWayland = byName(await runDoctor({ ...env, WAYLAND_DISPLAY: 'wayland-7', XDG_RUNTIME_DIR: runtime }), 'opener');
  assert.equal(onWayland.status, 'ok', JSON.stringify(onWayland));
  assert.match(onWayland.detail, /through Wayland display wayland-7$/);
  const noSocket = byName(await runDoctor({ ...env, WAYLAND_DISPLAY: 'wayland-8', XDG_RUNTIME_DIR: runtime }), 'opener');
  assert.equal(noSocket.status, 'warning');
  assert.match(noSocket.detail, /nothing answers on the Wayland socket .*wayland-8/);
});

test('doctor: notify-send on a session bus with no notification service is a warning; with one (dunst) it is fine', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  const bare = await startBusWithoutNotifications();
  t.after(() => bare.stop());
  const none = byName(await runDoctor({ ...env, ...bare.env }), 'notifications');
  assert.equal(none.status, 'warning', JSON.stringify(none));
  assert.match(none.detail, /^desktop through notify-send \(notify-send and a session bus\), but nothing on the session bus shows notifications/);
  assert.match(none.fix ?? '', /JACKIN_NOTIFY=terminal/);
  const service = await startNotificationService();
  t.after(() => service.stop());
  const shown = byName(await runDoctor({ ...env, ...service.env }), 'notifications');
  assert.deepEqual(shown, { name: 'notifications', status: 'ok', detail: 'desktop through notify-send (notify-send and a session bus)' });
});

test("doctor: capsule: this Linux host lends its Node's loader and libraries; without them, or off Linux, it says what run --image does instead", async (t) => {
  const here = byName(await runDoctor(base(t)), 'capsule');
  assert.equal(here.status, 'ok');
  assert.match(here.detail, /lends this host's Node, its loader and \d+ libraries \(.*libc\.so\.6.*\): any Linux image runs the capsule/);
  const none = capsuleCheck('linux', null);
  assert.equal(none.status, 'warning');
  assert.match(none.detail, /cannot lend its C library.*a musl or libc-less image stops/);
  assert.match(none.fix ?? '', /apt-get install libc-bin/);
  assert.deepEqual(capsuleCheck('darwin', null), {
    name: 'capsule',
    status: 'ok',
    detail: "this host's Node cannot run in a Linux container (darwin): jackin run --image uses the image's own jackin-capsule (--capsule image)",
  });
});
