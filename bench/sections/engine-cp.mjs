// Issue 50: what a user would run instead of `jackin export` and `jackin stage` is the engine's own
// `podman cp` or `docker cp`. In one real container per engine (started as `jackin run --image` starts one),
// on the same files, in alternating rounds: a file out of the workspace, a directory out of it (with a local
// `tar --zstd` of the same tree beside it), and a file into the container; with what each side spends per
// GiB: CPU (user + system), read/write system calls and the bytes that went through them (/proc/PID/io).
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { glibcTestImage } from '../../test/helpers/podman-image.mjs';
import { writeRandomFile } from '../lib/files.mjs';
import { TICKS, timedChild, vmHwmKiB } from '../lib/processes.mjs';
import { fmt, median } from '../lib/stats.mjs';
import { REPO_ROOT } from '../lib/variants.mjs';
import { writeTree } from './export.mjs';

export const id = 'engine-cp';
export const title = 'Engine cp: podman cp and docker cp against jackin export and stage in real containers';

const execFileP = promisify(execFile);
const JACKIN = join(REPO_ROOT, 'bin', 'jackin.js');
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** Where the container sees the run directory (container-run-argv.ts). */
const CONTAINER_RUN_DIR = '/jackin/run';

/** utime, stime, cutime, cstime of a live process, in seconds. */
function cpuWithChildren(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS;
}

/**
 * Read/write system calls and the bytes through them (rchar, wchar) of a process. For this process the
 * figures include every child it has waited for (Linux adds a reaped child's I/O accounting to its parent's),
 * so a delta around one waited-for command is that command's.
 */
function ioOf(pid) {
  const io = {};
  for (const line of readFileSync(`/proc/${pid}/io`, 'utf8').split('\n')) {
    const [k, v] = line.split(': ');
    if (k) io[k] = Number(v);
  }
  return { syscalls: io.syscr + io.syscw, bytes: io.rchar + io.wchar };
}

/** The sum of `probe(pid)` over `pids` (each a number, or an object of numbers). */
function sum(pids, probe) {
  let total;
  for (const pid of pids) {
    const v = probe(pid);
    if (typeof v === 'number') total = (total ?? 0) + v;
    else {
      total ??= {};
      for (const [k, x] of Object.entries(v)) total[k] = (total[k] ?? 0) + x;
    }
  }
  return total;
}

/** The pid of a daemon process by its exact executable name (dockerd, containerd), or undefined. */
function daemonPid(name) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** The capsule's pid in a container: the child of the container's init whose command line runs jackin-capsule.js. */
async function capsulePid(engine, name) {
  const { stdout } = await execFileP(engine, ['inspect', '--format', '{{.State.Pid}}', name]);
  const init = stdout.trim();
  for (const pid of readFileSync(`/proc/${init}/task/${init}/children`, 'utf8').trim().split(/\s+/)) {
    if (
      readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .some((a) => a.endsWith('/jackin-capsule.js'))
    )
      return Number(pid);
  }
  throw new Error(`no capsule in container ${name}`);
}

/** Starts the Docker engine as the tests do (scripts/docker-engine.sh); returns a stop function, or null when none answers. */
function useDockerEngine(log) {
  const env = { ...process.env, JACKIN_DOCKER_USER: String(process.pid) };
  const r = spawnSync(join(REPO_ROOT, 'scripts', 'docker-engine.sh'), ['start'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    log(`engine-cp: no Docker engine (scripts/docker-engine.sh start: ${r.stderr.trim() || `exit ${r.status}`}); docker is left out`);
    return null;
  }
  const ours = ['started', 'shared'].includes(r.stdout.trim());
  return () => {
    if (ours) spawnSync(join(REPO_ROOT, 'scripts', 'docker-engine.sh'), ['stop'], { env, stdio: 'ignore' });
  };
}

function socketAnswers(path) {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** A container as `jackin run --image` starts one (its own argv builder), the workspace at /workspace. */
async function startContainer(engine, workspace) {
  const { containerRunArgv, DEFAULT_IMAGE_PATH } = await import('../../dist/host/instances/container-run-argv.js');
  const image = (await glibcTestImage(engine)).ref;
  const name = `jackin-bench-cp-${process.pid}-${engine}`;
  const home = mkdtempSync(join(tmpdir(), 'jackin-bench-cp-'));
  const runDir = join(home, 'sockets', name);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const argv = containerRunArgv({
    engine,
    name,
    image,
    runDir,
    workspace,
    program: ['sleep', 'infinity'],
    user: null,
    term: 'xterm-256color',
    rows: 30,
    cols: 120,
    capsule: { kind: 'host', node: process.execPath, packageRoot: REPO_ROOT, imagePath: DEFAULT_IMAGE_PATH },
  });
  const remove = async () => {
    await execFileP(engine, ['rm', '-f', '-t', '0', name]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await execFileP(argv[0], argv.slice(1));
    for (let i = 0; ; i++) {
      if (await socketAnswers(join(runDir, 'jackin.sock'))) break;
      if (i > 300) throw new Error(`container ${name}: no capsule after 30 s`);
      await sleep(100);
    }
    return { engine, name, home, runDir, capsule: await capsulePid(engine, name), remove };
  } catch (e) {
    await remove();
    throw e;
  }
}

/**
 * Runs argv to completion and measures it and the processes in `also` (a live capsule or daemon): wall time,
 * CPU and I/O of the command (with its children) and of each of `also`.
 */
async function measured(argv, env, also) {
  const cpu0 = sum(also, cpuWithChildren) ?? 0;
  const io0 = sum([process.pid, ...also], ioOf);
  const r = await timedChild(argv, env);
  const otherCpu = (sum(also, cpuWithChildren) ?? 0) - cpu0;
  const io1 = sum([process.pid, ...also], ioOf);
  return {
    seconds: r.seconds,
    cpu: r.cpu + otherCpu,
    cmdCpu: r.cpu,
    otherCpu,
    syscalls: io1.syscalls - io0.syscalls,
    ioBytes: io1.bytes - io0.bytes,
    peakKiB: r.peakKiB,
    out: r.out,
  };
}

export async function run({ quick, log }) {
  const fileMiB = quick ? 64 : 1024;
  const treeMiB = quick ? 16 : 256;
  const stageMiB = quick ? 32 : 256;
  const rounds = quick ? 1 : 5;
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-engine-cp-'));
  const ws = join(base, 'ws');
  const out = join(base, 'out');
  mkdirSync(ws, { recursive: true });
  mkdirSync(out, { recursive: true });
  const data = { fileMiB, treeMiB, stageMiB, rounds, engines: [] };
  const containers = [];
  let stopDocker = null;
  try {
    log(`engine-cp: writing a ${fileMiB} MiB random file, a ${treeMiB} MiB tree and a ${stageMiB} MiB file to stage`);
    writeRandomFile(join(ws, 'big.bin'), fileMiB * MiB);
    data.treeBytes = writeTree(join(ws, 'tree'), treeMiB);
    const stageSrc = join(base, 'stage.bin');
    writeRandomFile(stageSrc, stageMiB * MiB);

    const engines = ['podman'];
    stopDocker = useDockerEngine(log);
    if (stopDocker !== null) engines.push('docker');
    for (const engine of engines) {
      log(`engine-cp: starting a ${engine} container`);
      containers.push(await startContainer(engine, ws));
    }

    const ops = (c) => {
      const env = { ...process.env, JACKIN_HOME: c.home };
      // The engine's cp works in its own client (podman) or in the daemon (dockerd, containerd): measured with them.
      const engineSide = c.engine === 'docker' ? ['dockerd', 'containerd'].map(daemonPid).filter((p) => p !== undefined) : [];
      const rmOut = () => {
        for (const n of readdirSync(out)) rmSync(join(out, n), { recursive: true, force: true });
      };
      const rmStaged = () => {
        rmSync(join(c.runDir, 'cp-stage.bin'), { force: true });
        rmSync(join(c.runDir, 'files'), { recursive: true, force: true });
      };
      return {
        fileCp: () => measured([c.engine, 'cp', `${c.name}:/workspace/big.bin`, join(out, 'big.bin')], env, engineSide).finally(rmOut),
        fileJackin: () => measured([process.execPath, JACKIN, 'export', '--from', c.name, 'big.bin', '--to', out, '--json'], env, [c.capsule]).finally(rmOut),
        dirCp: () => measured([c.engine, 'cp', `${c.name}:/workspace/tree`, join(out, 'tree')], env, engineSide).finally(rmOut),
        dirJackin: () => measured([process.execPath, JACKIN, 'export', '--from', c.name, 'tree', '--to', out, '--json'], env, [c.capsule]).finally(rmOut),
        // Both into the run directory's bind mount, the file system a staged file lands on.
        stageCp: () => measured([c.engine, 'cp', stageSrc, `${c.name}:${CONTAINER_RUN_DIR}/cp-stage.bin`], env, engineSide).finally(rmStaged),
        stageJackin: () => measured([process.execPath, JACKIN, 'stage', '--to', c.name, '--json', stageSrc], env, [c.capsule]).finally(rmStaged),
      };
    };
    const tar = () =>
      measured(['tar', '--zstd', '-cf', join(out, 'tree.tar.zst'), '-C', ws, 'tree'], process.env, []).finally(() =>
        rmSync(join(out, 'tree.tar.zst'), { force: true }),
      );

    const results = new Map(containers.map((c) => [c.engine, { engine: c.engine, ops: ops(c), runs: {} }]));
    const tarRuns = [];
    const KINDS = ['fileCp', 'fileJackin', 'dirCp', 'dirJackin', 'stageCp', 'stageJackin'];
    // Round 0 is a discarded warm-up of everything (page cache, fresh pages, JIT of the engines' clients).
    for (let round = 0; round <= rounds; round++) {
      const t = await tar();
      if (round > 0) tarRuns.push(t);
      for (const r of results.values()) {
        for (const kind of KINDS) {
          const m = await r.ops[kind]();
          if (round > 0) (r.runs[kind] ??= []).push(m);
        }
      }
      log(`engine-cp: round ${round} of ${rounds} done${round === 0 ? ' (warm-up)' : ''}`);
    }
    data.tar = summarize(tarRuns);
    for (const [engine, r] of results) {
      const c = containers.find((x) => x.engine === engine);
      const d = { engine, capsulePeakMiB: (vmHwmKiB(c.capsule) ?? NaN) / 1024 };
      for (const kind of KINDS) d[kind] = summarize(r.runs[kind]);
      data.engines.push(d);
      log(
        `engine-cp (${engine}): file ${fmt(d.fileCp.seconds, 2)} s cp / ${fmt(d.fileJackin.seconds, 2)} s jackin, directory ${fmt(d.dirCp.seconds, 2)} / ${fmt(d.dirJackin.seconds, 2)} s (tar ${fmt(data.tar.seconds, 2)} s), stage ${fmt(d.stageCp.seconds, 2)} / ${fmt(d.stageJackin.seconds, 2)} s`,
      );
    }
  } finally {
    for (const c of containers) await c.remove();
    stopDocker?.();
    rmSync(base, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

/** Medians of each figure over runs. */
function summarize(runs) {
  const pick = (k) => median(runs.map((r) => r[k]));
  return {
    seconds: pick('seconds'),
    runs: runs.map((r) => r.seconds),
    cpu: pick('cpu'),
    cmdCpu: pick('cmdCpu'),
    otherCpu: pick('otherCpu'),
    syscalls: pick('syscalls'),
    ioBytes: pick('ioBytes'),
    peakMiB: Math.max(...runs.map((r) => r.peakKiB)) / 1024,
  };
}

function render(d) {
  const lines = [];
  const perGiB = (x, mib) => (x * GiB) / (mib * MiB);
  const target = (ok) => (ok ? 'met' : '**missed**');
  for (const e of d.engines) {
    const rows = [
      ['file out', `${d.fileMiB} MiB`, e.fileCp, e.fileJackin, d.fileMiB],
      ['directory out', `${fmt(d.treeBytes / MiB, 0)} MiB tree`, e.dirCp, e.dirJackin, d.treeBytes / MiB],
      ['file in (stage)', `${d.stageMiB} MiB`, e.stageCp, e.stageJackin, d.stageMiB],
    ];
    const engineCpu = e.engine === 'docker' ? 'client + dockerd + containerd' : 'podman and its children';
    lines.push(
      `**${e.engine}** (\`${e.engine} cp\` against jackin; capsule peak RSS ${fmt(e.capsulePeakMiB, 0)} MiB)`,
      '',
      `| transfer | ${e.engine} cp (s) | jackin (s) | jackin / ${e.engine} cp throughput | CPU per GiB: ${e.engine} cp (${engineCpu}) | CPU per GiB: jackin host + capsule | read/write syscalls per GiB: cp / jackin | bytes through read/write per GiB: cp / jackin |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const [label, size, cp, j, mib] of rows) {
      lines.push(
        `| ${label}, ${size} | ${fmt(cp.seconds, 2)} | ${fmt(j.seconds, 2)} | ${fmt(cp.seconds / j.seconds, 2)}× | ${fmt(perGiB(cp.cpu, mib), 2)} s | ${fmt(perGiB(j.cmdCpu, mib), 2)} + ${fmt(perGiB(j.otherCpu, mib), 2)} s | ${fmt(perGiB(cp.syscalls, mib) / 1000, 1)}k / ${fmt(perGiB(j.syscalls, mib) / 1000, 1)}k | ${fmt(perGiB(cp.ioBytes, mib) / GiB, 2)} / ${fmt(perGiB(j.ioBytes, mib) / GiB, 2)} GiB |`,
      );
    }
    const fileRatio = e.fileCp.seconds / e.fileJackin.seconds;
    const stageRatio = e.stageCp.seconds / e.stageJackin.seconds;
    lines.push(
      '',
      `- file out at least 1.0× \`${e.engine} cp\`'s throughput: ${fmt(fileRatio, 2)}× — ${target(fileRatio >= 1)} (runs: cp ${e.fileCp.runs.map((x) => fmt(x, 2)).join(', ')} s; jackin ${e.fileJackin.runs.map((x) => fmt(x, 2)).join(', ')} s)`,
      `- stage at least 1.0× \`${e.engine} cp\`'s throughput: ${fmt(stageRatio, 2)}× — ${target(stageRatio >= 1)} (runs: cp ${e.stageCp.runs.map((x) => fmt(x, 2)).join(', ')} s; jackin ${e.stageJackin.runs.map((x) => fmt(x, 2)).join(', ')} s)`,
      `- directory export at most 1.25× \`tar --zstd\` (local, same tree, same rounds): ${fmt(e.dirJackin.seconds / d.tar.seconds, 2)}× — ${target(e.dirJackin.seconds / d.tar.seconds <= 1.25)} (tar ${fmt(d.tar.seconds, 2)} s, ${fmt(perGiB(d.tar.cpu, d.treeBytes / MiB), 2)} s CPU per GiB)`,
      `- peak RSS under 100 MiB each side: host ${fmt(Math.max(e.fileJackin.peakMiB, e.dirJackin.peakMiB, e.stageJackin.peakMiB), 0)} MiB, capsule ${fmt(e.capsulePeakMiB, 0)} MiB — ${target(Math.max(e.fileJackin.peakMiB, e.dirJackin.peakMiB, e.stageJackin.peakMiB, e.capsulePeakMiB) < 100)}`,
      '',
    );
  }
  lines.push(
    `Median of ${d.rounds} round(s) after a discarded warm-up; in each round a local \`tar --zstd\` of the tree, then per engine: \`cp\` then jackin for the file, the directory and the stage, on the same container and files. The container is started as \`jackin run --image\` starts one (workspace bind-mounted at /workspace, the host's Node and package mounted); the engine's cp reads the same bind-mounted file. jackin export includes starting \`jackin\`, the policy check, SHA-256 on both sides, fsync and the no-replace publish; \`jackin stage\` the host checks, SHA-256 on both sides and the create-new publish; the engines' cp neither hashes nor fsyncs. Staged files and \`cp\` into the container both land in the bind-mounted run directory. CPU is user + system from /proc of the command and its children, plus the capsule (jackin) or the daemons (\`docker cp\`: dockerd and containerd, with their children); syscalls are read and write calls (syscr + syscw of /proc/PID/io) of the same processes, and the bytes are those through them (rchar + wchar), a copy each way across the kernel.`,
    '',
  );
  return lines.join('\n');
}
