// Issue 50: what a user would run instead of `jackin export` and `jackin stage` is the engine's own
// `podman cp` or `docker cp`. In one real container per engine (started as `jackin run --image` starts one),
// on the same files, in alternating rounds: a file out of the workspace, a directory out of it (with a local
// `tar --zstd` of the same tree beside it), and a file into the container; with what each side spends per
// GiB: CPU (user + system), read/write system calls and the bytes that went through them (/proc/PID/io).
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve as resolvePath } from 'node:path';
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
async function startContainer(engine, workspace, tree) {
  const { containerRunArgv, DEFAULT_IMAGE_PATH } = await import('../../dist/host/instances/container-run-argv.js');
  const image = (await glibcTestImage(engine)).ref;
  const name = `jackin-bench-cp-${process.pid}-${engine}-${tree.id}`;
  const home = mkdtempSync(join('/var/tmp', 'jackin-bench-cp-'));
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
    capsule: { kind: 'host', node: tree.node, packageRoot: tree.root, imagePath: DEFAULT_IMAGE_PATH },
  });
  const remove = async () => {
    // docker rm has no -t (podman's stop timeout): -f kills at once on both.
    await execFileP(engine, engine === 'podman' ? ['rm', '-f', '-t', '0', name] : ['rm', '-f', name]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await execFileP(argv[0], argv.slice(1));
    for (let i = 0; ; i++) {
      if (await socketAnswers(join(runDir, 'jackin.sock'))) break;
      if (i > 300) throw new Error(`container ${name}: no capsule after 30 s`);
      await sleep(100);
    }
    return { engine, tree, name, home, runDir, capsule: await capsulePid(engine, name), remove };
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

/**
 * `base`: another checkout of jackin (built), measured in the same rounds as this one, each in a container of
 * its own with its own package mounted (before and after a change, on the same files and baselines).
 * `nodes` after the first (`--node`): this checkout again, its capsule on that Node (mounted in place of
 * this one's), as the capsule runtime runs it on a host that cannot lend its own Node (macOS, Windows):
 * `jackin` itself stays on this Node.
 */
export async function run({ quick, log, base, nodes = [] }) {
  const fileMiB = quick ? 64 : 1024;
  const treeMiB = quick ? 16 : 256;
  const stageMiB = quick ? 32 : 256;
  const rounds = quick ? 1 : 5;
  const others = nodes.slice(1);
  const trees = [
    { id: 'this', label: others.length > 0 ? `jackin (capsule on Node ${process.versions.node})` : 'jackin', root: REPO_ROOT, node: process.execPath },
  ];
  if (base !== undefined) trees.push({ id: 'base', label: 'jackin (base)', root: resolvePath(base), node: process.execPath });
  for (const n of others) trees.push({ id: `node-${n.version}`, label: `jackin (capsule on Node ${n.version})`, root: REPO_ROOT, node: n.path });
  // Under /var/tmp: during one run here something removed a directory of ours under /tmp (another session's cleanup).
  const dir = mkdtempSync(join('/var/tmp', 'jackin-engine-cp-'));
  const ws = join(dir, 'ws');
  const out = join(dir, 'out');
  mkdirSync(ws, { recursive: true });
  mkdirSync(out, { recursive: true });
  const data = {
    loadAverageBefore: readFileSync('/proc/loadavg', 'utf8').trim(),
    fileMiB,
    treeMiB,
    stageMiB,
    rounds,
    trees: trees.map(({ id, label, root, node }) => ({ id, label, root, node })),
    engines: [],
  };
  const containers = [];
  let stopDocker = null;
  try {
    log(`engine-cp: writing a ${fileMiB} MiB random file, a ${treeMiB} MiB tree and a ${stageMiB} MiB file to stage`);
    writeRandomFile(join(ws, 'big.bin'), fileMiB * MiB);
    data.treeBytes = writeTree(join(ws, 'tree'), treeMiB);
    const stageSrc = join(dir, 'stage.bin');
    writeRandomFile(stageSrc, stageMiB * MiB);

    const engines = ['podman'];
    stopDocker = useDockerEngine(log);
    if (stopDocker !== null) engines.push('docker');
    for (const engine of engines) {
      for (const tree of trees) {
        log(`engine-cp: starting a ${engine} container for ${tree.label} (${tree.root})`);
        containers.push(await startContainer(engine, ws, tree));
      }
    }
    const rmOut = () => {
      for (const n of readdirSync(out)) rmSync(join(out, n), { recursive: true, force: true });
    };
    const rmStaged = (c) => {
      rmSync(join(c.runDir, 'cp-stage.bin'), { force: true });
      rmSync(join(c.runDir, 'files'), { recursive: true, force: true });
    };
    // The engine's cp works in its own client (podman) or in the daemon (dockerd, containerd): measured with them.
    const cpOps = (c) => {
      const engineSide = c.engine === 'docker' ? ['dockerd', 'containerd'].map(daemonPid).filter((p) => p !== undefined) : [];
      return {
        // The copy, then its fdatasync timed apart: jackin's export is durable when it says it is done, the
        // engine's copy only once the page cache is written back, which the disk's speed bounds.
        file: async () => {
          try {
            const m = await measured([c.engine, 'cp', `${c.name}:/workspace/big.bin`, join(out, 'big.bin')], process.env, engineSide);
            const s = await measured(['sync', '-d', join(out, 'big.bin')], process.env, []);
            return { ...m, syncSeconds: s.seconds };
          } finally {
            rmOut();
          }
        },
        dir: () => measured([c.engine, 'cp', `${c.name}:/workspace/tree`, join(out, 'tree')], process.env, engineSide).finally(rmOut),
        // Into the run directory's bind mount, the file system a staged file lands on.
        stage: () => measured([c.engine, 'cp', stageSrc, `${c.name}:${CONTAINER_RUN_DIR}/cp-stage.bin`], process.env, engineSide).finally(() => rmStaged(c)),
      };
    };
    const jackinOps = (c) => {
      const env = { ...process.env, JACKIN_HOME: c.home };
      const bin = join(c.tree.root, 'bin', 'jackin.js');
      return {
        file: () => measured([process.execPath, bin, 'export', '--from', c.name, 'big.bin', '--to', out, '--json'], env, [c.capsule]).finally(rmOut),
        dir: () => measured([process.execPath, bin, 'export', '--from', c.name, 'tree', '--to', out, '--json'], env, [c.capsule]).finally(rmOut),
        stage: () => measured([process.execPath, bin, 'stage', '--to', c.name, '--json', stageSrc], env, [c.capsule]).finally(() => rmStaged(c)),
      };
    };
    const tar = () =>
      measured(['tar', '--zstd', '-cf', join(out, 'tree.tar.zst'), '-C', ws, 'tree'], process.env, []).finally(() =>
        rmSync(join(out, 'tree.tar.zst'), { force: true }),
      );

    // Per engine: its cp (through the first container) and each tree's jackin (through its own container).
    const variants = engines.map((engine) => {
      const mine = containers.filter((c) => c.engine === engine);
      return {
        engine,
        subjects: [{ id: 'cp', ops: cpOps(mine[0]), runs: {} }, ...mine.map((c) => ({ id: c.tree.id, container: c, ops: jackinOps(c), runs: {} }))],
      };
    });
    // The fixed cost in every jackin figure: starting Node, then jackin. An environment's
    // NODE_EXTRA_CA_CERTS is read at every start by some Nodes (20 does, 24 defers it), so when it is set
    // both are timed again without it, to show that part apart.
    const caCerts = process.env.NODE_EXTRA_CA_CERTS;
    const { NODE_EXTRA_CA_CERTS: _unset, ...envWithoutCa } = process.env;
    const startOps = {
      node: (env) => measured([process.execPath, '-e', '0'], env, []),
      jackin: (env) => measured([process.execPath, join(REPO_ROOT, 'bin', 'jackin.js'), '--version'], env, []),
    };
    const startRuns = { node: [], jackin: [], nodeWithoutCa: [], jackinWithoutCa: [] };
    const tarRuns = [];
    const KINDS = ['file', 'dir', 'stage'];
    // Round 0 is a discarded warm-up of everything (page cache, fresh pages, JIT of the engines' clients).
    // Within a round each transfer runs once per subject, one after the other, so a slow spell of the
    // machine falls on all of them alike; the order changes each round (every permutation in turn, not a
    // rotation, which keeps who follows whom), because the place in it matters here: the export right after
    // the engine's 1 GiB copy was deleted cost the host 1.3 to 1.4 times the CPU per GiB of the same code
    // placed elsewhere, in two runs (fresh pages from the balloon, bench/README.md).
    for (let round = 0; round <= rounds; round++) {
      const t = await tar();
      if (round > 0) tarRuns.push(t);
      for (const [what, op] of Object.entries(startOps)) {
        const m = await op(process.env);
        const w = caCerts === undefined ? undefined : await op(envWithoutCa);
        if (round > 0) {
          startRuns[what].push(m.seconds);
          if (w !== undefined) startRuns[`${what}WithoutCa`].push(w.seconds);
        }
      }
      for (const v of variants) {
        const order = permutation(v.subjects, round);
        for (const kind of KINDS) {
          for (const subject of order) {
            const m = await subject.ops[kind]();
            if (round > 0) (subject.runs[kind] ??= []).push(m);
          }
        }
      }
      log(`engine-cp: round ${round} of ${rounds} done${round === 0 ? ' (warm-up)' : ''}`);
    }
    data.tar = summarize(tarRuns);
    data.starts = { caCerts: caCerts !== undefined, ...Object.fromEntries(Object.entries(startRuns).map(([k, v]) => [k, v.length > 0 ? median(v) : null])) };
    data.loadAverageAfter = readFileSync('/proc/loadavg', 'utf8').trim();
    for (const v of variants) {
      const d = { engine: v.engine, subjects: {} };
      for (const subject of v.subjects) {
        const s = {};
        for (const kind of KINDS) s[kind] = summarize(subject.runs[kind]);
        if (subject.container !== undefined) s.capsulePeakMiB = (vmHwmKiB(subject.container.capsule) ?? NaN) / 1024;
        d.subjects[subject.id] = s;
      }
      data.engines.push(d);
      for (const subject of v.subjects) {
        const s = d.subjects[subject.id];
        log(
          `engine-cp (${v.engine}, ${subject.id}): file ${fmt(s.file.seconds, 2)} s, directory ${fmt(s.dir.seconds, 2)} s, stage ${fmt(s.stage.seconds, 2)} s (tar ${fmt(data.tar.seconds, 2)} s)`,
        );
      }
    }
  } finally {
    for (const c of containers) await c.remove();
    stopDocker?.();
    rmSync(dir, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

/** The `n`th of the permutations of `items` (in a fixed order, repeating). */
function permutation(items, n) {
  const all = [];
  const walk = (prefix, rest) => {
    if (rest.length === 0) all.push(prefix);
    rest.forEach((x, i) => walk([...prefix, x], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  walk([], items);
  return all[n % all.length];
}

/** Medians of each figure over runs. */
function summarize(runs) {
  const pick = (k) => median(runs.map((r) => r[k]));
  return {
    seconds: pick('seconds'),
    runs: runs.map((r) => r.seconds),
    ...(runs[0].syncSeconds === undefined
      ? {}
      : { withSyncSeconds: median(runs.map((r) => r.seconds + r.syncSeconds)), syncRuns: runs.map((r) => r.syncSeconds) }),
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
  const sizes = { file: d.fileMiB, dir: d.treeBytes / MiB, stage: d.stageMiB };
  const labels = {
    file: `file out, ${d.fileMiB} MiB`,
    dir: `directory out, ${fmt(d.treeBytes / MiB, 0)} MiB tree`,
    stage: `file in (stage), ${d.stageMiB} MiB`,
  };
  const runs = (r) => r.runs.map((x) => fmt(x, 2)).join(', ');
  for (const e of d.engines) {
    const cp = e.subjects.cp;
    const engineCpu = e.engine === 'docker' ? 'client + dockerd + containerd' : 'podman and its children';
    lines.push(
      `**${e.engine}**`,
      '',
      `| transfer | who | seconds (median) | throughput / \`${e.engine} cp\`'s | CPU per GiB | read/write syscalls per GiB | bytes through read/write per GiB |`,
      '|---|---|---:|---:|---:|---:|---:|',
    );
    for (const kind of ['file', 'dir', 'stage']) {
      const mib = sizes[kind];
      lines.push(
        `| ${labels[kind]} | \`${e.engine} cp\` | ${fmt(cp[kind].seconds, 2)} | 1.00× | ${fmt(perGiB(cp[kind].cpu, mib), 2)} s (${engineCpu}) | ${fmt(perGiB(cp[kind].syscalls, mib) / 1000, 1)}k | ${fmt(perGiB(cp[kind].ioBytes, mib) / GiB, 2)} GiB |`,
      );
      if (cp[kind].withSyncSeconds !== undefined) {
        lines.push(
          `| | \`${e.engine} cp\` + fdatasync of the copy | ${fmt(cp[kind].withSyncSeconds, 2)} | ${fmt(cp[kind].seconds / cp[kind].withSyncSeconds, 2)}× | | | |`,
        );
      }
      for (const t of d.trees) {
        const j = e.subjects[t.id][kind];
        lines.push(
          `| | ${t.label} | ${fmt(j.seconds, 2)} | ${fmt(cp[kind].seconds / j.seconds, 2)}× | ${fmt(perGiB(j.cmdCpu, mib), 2)} host + ${fmt(perGiB(j.otherCpu, mib), 2)} capsule s | ${fmt(perGiB(j.syscalls, mib) / 1000, 1)}k | ${fmt(perGiB(j.ioBytes, mib) / GiB, 2)} GiB |`,
        );
      }
    }
    lines.push('');
    for (const t of d.trees) {
      const s = e.subjects[t.id];
      const fileRatio = cp.file.seconds / s.file.seconds;
      const stageRatio = cp.stage.seconds / s.stage.seconds;
      const dirRatio = s.dir.seconds / d.tar.seconds;
      const hostPeak = Math.max(s.file.peakMiB, s.dir.peakMiB, s.stage.peakMiB);
      lines.push(
        `${t.label} on ${e.engine}:`,
        '',
        `- file out at least 1.0× \`${e.engine} cp\`'s throughput: ${fmt(fileRatio, 2)}× — ${target(fileRatio >= 1)} (runs: cp ${runs(cp.file)} s, its fdatasync after it ${cp.file.syncRuns.map((x) => fmt(x, 2)).join(', ')} s; jackin ${runs(s.file)} s); against cp + fdatasync: ${fmt(cp.file.withSyncSeconds / s.file.seconds, 2)}×`,
        `- stage at least 1.0× \`${e.engine} cp\`'s throughput: ${fmt(stageRatio, 2)}× — ${target(stageRatio >= 1)} (runs: cp ${runs(cp.stage)} s; jackin ${runs(s.stage)} s)`,
        `- directory export at most 1.25× a local \`tar --zstd\` of the same tree in the same rounds: ${fmt(dirRatio, 2)}× — ${target(dirRatio <= 1.25)} (tar ${runs(d.tar)} s; jackin ${runs(s.dir)} s)`,
        `- peak RSS under 100 MiB each side: host ${fmt(hostPeak, 0)} MiB, capsule ${fmt(s.capsulePeakMiB, 0)} MiB — ${target(Math.max(hostPeak, s.capsulePeakMiB) < 100)}`,
        '',
      );
    }
  }
  if (d.starts !== undefined) {
    const st = d.starts;
    const ms = (x) => `${fmt(x * 1000, 0)} ms`;
    lines.push(
      `Starting, the fixed cost in every jackin figure (medians over the rounds): \`node -e 0\` ${ms(st.node)}, \`jackin --version\` ${ms(st.jackin)}${
        st.caCerts
          ? `; without NODE_EXTRA_CA_CERTS, which this environment sets (Node 20 reads the file at every start, Node 24 only when it first needs it): ${ms(st.nodeWithoutCa)} and ${ms(st.jackinWithoutCa)}`
          : ''
      }.`,
      '',
    );
  }
  lines.push(
    `Load average (1, 5, 15 min) before the section: ${d.loadAverageBefore.split(' ').slice(0, 3).join(', ')}; after: ${d.loadAverageAfter.split(' ').slice(0, 3).join(', ')}. Median of ${d.rounds} round(s) after a discarded warm-up. In each round: a local \`tar --zstd\` of the tree (${fmt(perGiB(d.tar.cpu, d.treeBytes / MiB), 2)} s CPU per GiB), then per engine and per transfer the engine's cp and jackin${d.trees.length > 1 ? ' of each variant (each in a container of its own, its own package and capsule Node mounted)' : ''}, one after the other, on the same files, in another order each round (the permutations in turn). The containers are started as \`jackin run --image\` starts one (the workspace bind-mounted at /workspace, the host's Node, or the one a label names, and the package mounted); the engine's cp reads the same bind-mounted files. \`jackin export\` includes starting \`jackin\`, the policy check, SHA-256 on both sides, fsync and the no-replace publish; \`jackin stage\` the host checks, SHA-256 on both sides and the create-new publish; the engines' cp neither hashes nor fsyncs. Staged files and \`cp\` into the container both land in the bind-mounted run directory. CPU is user + system from /proc of the command and its children, plus the capsule (jackin) or the daemons with their children (\`docker cp\`: dockerd and containerd); syscalls are read and write calls (syscr + syscw of /proc/PID/io) of the same processes, and the bytes are those through them (rchar + wchar).`,
    '',
  );
  return lines.join('\n');
}
