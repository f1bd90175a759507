// Starts `jackin-capsule serve` directly (no tmux) under a private JACKIN_HOME, for export tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { CAPSULE_BIN, runJackin, type JackinResult } from './jackin-cli.ts';
import { pollUntil } from './poll.ts';
import { removeTestDir } from './test-run.ts';
import { stopChild } from './stop-child.ts';
import { connectSocket, socketTransport } from '../../src/transport/socket.ts';
import type { Transport } from '../../src/transport/transport.ts';

export interface ExportCapsule {
  readonly home: string;
  readonly name: string;
  readonly workspace: string;
  readonly downloads: string;
  readonly runDir: string;
  readonly socket: string;
  readonly child: ChildProcess;
  readonly env: NodeJS.ProcessEnv;
  connect(): Promise<Transport>;
  /** Runs `jackin` with this capsule's environment; never throws on a non-zero status. */
  jackin(args: string[]): Promise<JackinResult>;
}

export async function startExportCapsule(t: TestContext, name: string, policy?: object): Promise<ExportCapsule> {
  const base = mkdtempSync(join(tmpdir(), 'jackin-export-'));
  const home = join(base, 'home');
  const workspace = join(base, 'ws');
  const downloads = join(base, 'dl');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(downloads, { recursive: true });
  const runDir = join(home, 'sockets', name);
  const args = [CAPSULE_BIN, 'serve', '--run-dir', runDir, '--workspace', workspace, '--name', name];
  if (policy !== undefined) {
    const p = join(base, 'policy.json');
    writeFileSync(p, JSON.stringify(policy));
    args.push('--policy', p);
  }
  // A program that ends when its terminal hangs up (`read` gets EOF): tests SIGKILL the capsule, and a
  // `sleep` left behind would outlive the test run.
  args.push('--', 'sh', '-c', 'read line');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  // Registered before anything can fail, so the capsule and its directories always go.
  t.after(async () => {
    await stopChild(child, 'SIGKILL');
    removeTestDir(base);
  });
  const socket = join(runDir, 'jackin.sock');
  await pollUntil(
    `capsule ${name} to listen on ${socket}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`capsule exited: ${stderr}`);
      try {
        (await connectSocket(socket)).destroy();
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 20_000, last: () => stderr },
  );
  const env = { ...process.env, JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: downloads };
  return {
    home,
    name,
    workspace,
    downloads,
    runDir,
    socket,
    child,
    env,
    connect: async () => socketTransport(await connectSocket(socket), socket),
    jackin: (a) => runJackin(a, env),
  };
}
