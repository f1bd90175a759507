/**
 * Reaching another machine over OpenSSH (`--ssh [user@]host[:port]`): the ssh command line (the operator's
 * `ssh`, or JACKIN_SSH_COMMAND as GIT_SSH_COMMAND replaces it), OpenSSH's connection sharing so that one
 * session makes one connection, and remote commands quoted for the remote's shell. ssh runs as the
 * operator runs it: their config, agent, known hosts and ProxyJump all apply.
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { nodeCrypto } from '../../lazy-builtins.ts';
import { splitShellWords } from '../platform/shell-words.ts';

/** How long the shared connection stays up after its last session ends: the next command of a burst reuses it. */
const CONTROL_PERSIST_SECONDS = 10;
/** Hex digits of a control socket's name: a hash of the ssh words and the target (one master for each). */
const CONTROL_NAME_LENGTH = 20;
/**
 * Longest control directory jackin uses under JACKIN_HOME: the socket's name and the 17-character suffix of
 * OpenSSH's temporary name for it must fit a Unix socket path (104 bytes on macOS).
 */
const MAX_CONTROL_DIR_LENGTH = 104 - 1 - CONTROL_NAME_LENGTH - 17;

/** Where `--ssh` points: the destination ssh is given, and the port when the target named one. */
export interface SshTarget {
  /** `host` or `user@host`, as ssh's destination. */
  readonly destination: string;
  readonly port?: number;
}

function badTarget(target: string, why: string): JackinError {
  return new JackinError('E_SSH_CONFIG', `--ssh ${JSON.stringify(target)} ${why}: pass [user@]host[:port], e.g. --ssh dev@box:2222`);
}

/** Parses `[user@]host[:port]` (an IPv6 host in brackets: `[::1]:2222`). A host alias of ~/.ssh/config works as is. */
export function parseSshTarget(target: string): SshTarget {
  if (target.length === 0) throw badTarget(target, 'is empty');
  // ssh would read a leading "-" as an option, and a blank or control character is no host name.
  if (target.startsWith('-')) throw badTarget(target, 'starts with "-" and would be read as an option');
  if (/[\s\x00-\x1f\x7f]/.test(target)) throw badTarget(target, 'contains a blank or a control character');
  const at = target.lastIndexOf('@');
  const user = at >= 0 ? target.slice(0, at + 1) : '';
  let rest = target.slice(at + 1);
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed !== null) {
    rest = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (/^[^:]+:\d+$/.test(rest)) {
    const colon = rest.lastIndexOf(':');
    port = Number(rest.slice(colon + 1));
    rest = rest.slice(0, colon);
  } else if (rest.includes(':') && !/^[0-9a-f:]+$/i.test(rest)) {
    throw badTarget(target, 'has a port that is not a number');
  }
  if (rest.length === 0 || (at >= 0 && user.length === 1)) throw badTarget(target, 'names no host or no user');
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) throw badTarget(target, 'has a port outside 1-65535');
  return { destination: `${user}${rest}`, ...(port !== undefined ? { port } : {}) };
}

/** The ssh command and its options: JACKIN_SSH_COMMAND's words, else `ssh`. */
export function sshCommand(env: NodeJS.ProcessEnv): string[] {
  const raw = env['JACKIN_SSH_COMMAND'];
  if (raw === undefined || raw.trim() === '') return ['ssh'];
  const words = splitShellWords(raw, (what) => new JackinError('E_SSH_CONFIG', `JACKIN_SSH_COMMAND ${JSON.stringify(raw)} has ${what}; fix the quoting`));
  if (words.length === 0) return ['ssh'];
  return words;
}

/**
 * A word for the remote's shell: ssh joins its remote command's arguments with blanks and the login shell
 * reads the line again, so every word goes in single quotes.
 */
export function remoteQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The remote command line that runs `script` in `sh -c` with `args` as "$1"... */
export function remoteScript(script: string, args: readonly string[]): string {
  return ['sh', '-c', remoteQuote(script), 'jackin', ...args.map(remoteQuote)].join(' ');
}

/** The control socket's name for these ssh words and target (ssh expands nothing in it: hex only). */
export function controlName(base: readonly string[], target: SshTarget): string {
  return nodeCrypto()
    .createHash('sha256')
    .update(JSON.stringify([base, target.destination, target.port ?? null]))
    .digest('hex')
    .slice(0, CONTROL_NAME_LENGTH);
}

/**
 * The argv that runs `remoteCommand` on the target: the operator's ssh words first (their -o settings win:
 * ssh keeps the first value of an option), then connection sharing through `controlDir`, then the target.
 */
export function sshArgv(base: readonly string[], target: SshTarget, controlDir: string, remoteCommand: string, { tty = false } = {}): string[] {
  return [
    ...base,
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=${join(controlDir, controlName(base, target))}`,
    '-o',
    `ControlPersist=${CONTROL_PERSIST_SECONDS}`,
    ...(target.port !== undefined ? ['-p', String(target.port)] : []),
    tty ? '-t' : '-T',
    '--',
    target.destination,
    remoteCommand,
  ];
}

/**
 * jackin's private directory for OpenSSH's control sockets (0700, ours, not a symlink): under JACKIN_HOME
 * when the socket path fits there, else under /tmp as `jackin-ssh-<uid>` (what fits there on every system).
 */
export function sshControlDir(home: string): string {
  const under = join(home, 'ssh');
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  // ssh reads ControlPath as one word and expands %: a directory with a blank or % in it goes to /tmp too.
  const dir = under.length <= MAX_CONTROL_DIR_LENGTH && !/[\s%]/.test(under) ? under : join('/tmp', `jackin-ssh-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new JackinError('E_SSH_CONFIG', `${dir} must be a directory of yours with mode 0700 (it holds ssh's shared connections); remove it`);
  }
  return dir;
}

/** One remote command's outcome. */
export interface SshResult {
  readonly status: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** The last bytes of a remote command's stderr kept for a message. */
const STDERR_KEEP = 4000;

/**
 * Runs `argv` (an sshArgv) and collects its stdout. `input`, when given, is piped to its stdin (a tar
 * stream). With `interactive`, ssh's stderr is the operator's: ssh asks a host key or password question on
 * /dev/tty, and says why it failed, before jackin takes the terminal over. stdin is never the terminal: a
 * client of a shared connection hands its stdin to the master, which would then read the operator's keys.
 */
export function runSsh(
  argv: readonly string[],
  { input, interactive = false }: { input?: (stdin: NodeJS.WritableStream) => Promise<void>; interactive?: boolean } = {},
): Promise<SshResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: [input !== undefined ? 'pipe' : 'ignore', 'pipe', interactive ? 'inherit' : 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    let inputFailed: unknown = null;
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-STDERR_KEEP)));
    child.once('error', (e: NodeJS.ErrnoException) => {
      const hint = e.code === 'ENOENT' ? `${argv[0]} is not installed or not on PATH (set JACKIN_SSH_COMMAND to your ssh)` : (e.code ?? e.message);
      reject(new JackinError('E_SSH_FAILED', `cannot start ${argv[0]}: ${hint}`, { cause: e }));
    });
    if (input !== undefined) {
      // A remote that ends early (a full disk) closes the pipe: its status says why, not EPIPE.
      child.stdin!.on('error', () => undefined);
      input(child.stdin!).then(
        () => child.stdin!.end(),
        (e: unknown) => {
          inputFailed = e;
          child.stdin!.destroy();
        },
      );
    }
    child.once('close', (status) => {
      // A remote that failed says why in its status and stderr (the caller's message); one that ended well
      // without all its input is still a failure.
      if (inputFailed !== null && status === 0) {
        const why = inputFailed instanceof Error ? inputFailed.message : String(inputFailed);
        reject(new JackinError('E_SSH_FAILED', `the input of \`${argv[0]}\` did not reach the remote: ${why}`, { cause: inputFailed }));
      } else resolve({ status, stdout: Buffer.concat(out), stderr: err });
    });
  });
}
