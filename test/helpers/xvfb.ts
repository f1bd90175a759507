/**
 * A private X server (Xvfb) and a real X11 clipboard owned by `xclip` for tests. Debian packages: xvfb,
 * xclip. Every process started here is stopped by its own pid.
 */
import { spawn, spawnSync } from 'node:child_process';
import { pollUntil } from './poll.ts';
import { stopChild } from './stop-child.ts';

export interface Xvfb {
  display: string;
  /** process.env with DISPLAY set to this server and WAYLAND_DISPLAY removed. */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/**
 * Starts Xvfb on a display number it picks itself (`-displayfd`, so two test processes never race for one
 * number), and waits until a client can talk to it. `-noreset`: by default the server resets when its last
 * client leaves (between two clipboard owners), and a client connecting during the reset gets "Can't open
 * display".
 */
export async function startXvfb(): Promise<Xvfb> {
  const child = spawn('Xvfb', ['-displayfd', '3', '-noreset', '-nolisten', 'tcp', '-screen', '0', '640x480x24'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  let written = '';
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => (written += b.toString('latin1')));
  try {
    const n = await pollUntil('Xvfb to report its display number', () => {
      if (child.exitCode !== null) throw new Error(`Xvfb exited with ${child.exitCode}`);
      return /^\d+\n/.test(written) ? written.trim() : undefined;
    });
    const display = `:${n}`;
    const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: display };
    delete env.WAYLAND_DISPLAY;
    delete env.JACKIN_CLIPBOARD;
    await pollUntil(`Xvfb ${display} to accept clients`, () => {
      // xclip exits 1 with "target TARGETS not available" once it can talk to the server.
      const r = spawnSync('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], { env, encoding: 'utf8' });
      return r.error === undefined && !/open display/i.test(r.stderr);
    });
    return { display, env, stop: () => stopChild(child) };
  } catch (e) {
    await stopChild(child);
    throw e;
  }
}

export interface ClipboardOwner {
  stop(): Promise<void>;
}

/**
 * Makes `xclip` own the CLIPBOARD selection serving `data` as `type` (in the foreground, so we hold its
 * pid), and waits until TARGETS lists the type.
 */
export async function ownClipboard(x: Xvfb, type: string, data: Buffer): Promise<ClipboardOwner> {
  const child = spawn('xclip', ['-quiet', '-selection', 'clipboard', '-t', type, '-i'], {
    env: x.env,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  child.stdin!.end(data);
  await pollUntil(`xclip to own the clipboard as ${type}`, () => {
    if (child.exitCode !== null) throw new Error(`xclip exited with ${child.exitCode}: ${stderr}`);
    const r = spawnSync('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], { env: x.env, encoding: 'utf8' });
    return r.status === 0 && r.stdout.split('\n').includes(type);
  });
  return { stop: () => stopChild(child) };
}
