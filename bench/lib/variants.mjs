// The ways of putting a program in front of the operator that the benchmark compares. Each variant starts
// `argv` so that the bench process's PTY is the operator's terminal, and stops everything it started.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnOnPty } from './pty-process.mjs';
import { capsulePids, isAlive, signal } from './processes.mjs';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const JACKIN_BIN = join(REPO_ROOT, 'bin', 'jackin.js');

function baseEnv(extra = {}) {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    ...extra,
  };
}

/** The baseline: the program itself on the PTY. */
export const direct = {
  id: 'direct',
  label: 'direct PTY',
  async start(argv) {
    const [file, ...args] = argv;
    const p = spawnOnPty(file, args, { env: baseEnv() });
    return {
      pty: p,
      async stop() {
        p.kill();
      },
    };
  },
};

/** The second baseline: the program in a tmux session whose client is attached to the PTY. */
export const tmux = {
  id: 'tmux',
  label: 'tmux',
  async start(argv) {
    const socket = `jackin-bench-${process.pid}-${Date.now()}`;
    // The server's socket goes in a directory of its own, removed in stop(): tmux leaves the socket file
    // behind when its server is killed, and in the shared /tmp/tmux-<uid> every run left one.
    const dir = mkdtempSync(join(tmpdir(), 'jackin-bench-tmux-'));
    const env = baseEnv({ TMUX_TMPDIR: dir });
    const command = argv.map(shq).join(' ');
    const p = spawnOnPty(
      'tmux',
      [
        '-L',
        socket,
        '-f',
        '/dev/null',
        'start-server',
        ';',
        'set-option',
        '-g',
        'status',
        'off',
        ';',
        'set-option',
        '-g',
        'default-terminal',
        'xterm-256color',
        ';',
        'new-session',
        command,
      ],
      { env },
    );
    return {
      pty: p,
      async stop() {
        try {
          execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore', env });
        } catch {
          // The session ended with its program.
        }
        p.kill();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/**
 * A reference, not a target: util-linux `script`, a small C program that starts the program on a PTY of its
 * own and copies that PTY's output to the operator's (its typescript goes to /dev/null). That is the part
 * every relay has (jackin, tmux, `docker exec -it`): two PTYs where the direct baseline has one, and nothing
 * else (no socket, no screen model, no filter). Where a PTY is costly to cross (on a virtual machine that pays
 * for every wake-up of the tty worker), this floor, not the direct PTY, bounds what any relay can reach.
 */
export const script = {
  id: 'script',
  label: 'script (two PTYs)',
  async start(argv) {
    const p = spawnOnPty('script', ['--quiet', '--return', '--command', argv.map(shq).join(' '), '/dev/null'], {
      env: baseEnv({ SHELL: '/bin/sh' }),
    });
    return {
      pty: p,
      async stop() {
        p.kill();
      },
    };
  },
};

/**
 * The subject: `jackin run` (capsule spawned locally, host attached to the PTY), under the Node at
 * `nodePath` (the bench's own by default; `jackin run` starts its capsule on the Node that runs it). Another
 * Node refuses the code caches the build made, and compiles the bundles as usual.
 */
export function jackinOn({ id = 'jackin', label = 'jackin run', nodePath = process.execPath } = {}) {
  return {
    id,
    label,
    async start(argv) {
      if (!existsSync(join(REPO_ROOT, 'dist', 'jackin.bundle.cjs'))) {
        throw new Error(`dist/jackin.bundle.cjs is missing: run \`npm run build\` in ${REPO_ROOT}`);
      }
      const home = mkdtempSync(join(tmpdir(), 'jackin-bench-'));
      const name = `bench-${process.pid}`;
      const p = spawnOnPty(nodePath, [JACKIN_BIN, 'run', '--name', name, '--', ...argv], {
        env: baseEnv({ JACKIN_HOME: home, JACKIN_PASTE_KEY: 'none' }),
      });
      return {
        pty: p,
        /** The session's JACKIN_HOME (its capsule: capsulePids(home)). */
        home,
        async stop() {
          // The capsule is detached from the PTY by design (it survives a detach), so stop it explicitly.
          for (const pid of capsulePids(home)) signal(pid, 'SIGTERM');
          for (let i = 0; i < 100 && capsulePids(home).some(isAlive); i++) await sleep(20);
          for (const pid of capsulePids(home)) signal(pid, 'SIGKILL');
          p.kill();
          rmSync(home, { recursive: true, force: true });
        },
      };
    },
  };
}

export const jackin = jackinOn();

export const ALL_VARIANTS = [direct, script, tmux, jackin];

export function shq(s) {
  return /^[A-Za-z0-9_./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
