// Issue 6: export throughput of a large file against `cp` + fsync of the copy, directory export against
// GNU `tar --zstd -cf` of the same tree, and peak RSS (VmHWM) of the capsule and of `jackin export`.
// Issue 38: the same measures under several Nodes in one run (`npm run bench -- --node 20.20.2`), turn by
// turn on the same files against the same baselines.
import { spawn, spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from '../lib/stats.mjs';
import { writeRandomFile } from '../lib/files.mjs';
import { cpuOf, timedChild, vmHwmKiB } from '../lib/processes.mjs';

export const id = 'export';
export const title = 'Export: file and directory throughput, peak memory';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CAPSULE = join(root, 'bin', 'jackin-capsule.js');
const JACKIN = join(root, 'bin', 'jackin.js');
const MiB = 1024 * 1024;

/** A tree of compressible text and random files, like a build output. */
export function writeTree(dir, totalMiB) {
  const text = Buffer.from('export const value = "some fairly repetitive source text";\n'.repeat(2000));
  let written = 0;
  for (let d = 0; written < totalMiB * MiB; d++) {
    const sub = join(dir, `pkg-${d}`, 'src');
    mkdirSync(sub, { recursive: true });
    for (let f = 0; f < 50 && written < totalMiB * MiB; f++) {
      const random = f % 5 === 0;
      const b = random ? randomFillSync(Buffer.alloc(256 * 1024)) : text;
      const fd = openSync(join(sub, `file-${f}.${random ? 'bin' : 'js'}`), 'w');
      writeSync(fd, b);
      closeSync(fd);
      written += b.length;
    }
  }
  return written;
}

export async function waitForSocket(path, child) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('capsule exited before listening');
    const ok = await new Promise((res) => {
      const s = connect(path);
      s.once('connect', () => (s.destroy(), res(true)));
      s.once('error', () => res(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`no socket at ${path}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startCapsule(home, name, workspace, node = process.execPath) {
  const runDir = join(home, 'sockets', name);
  // Started as `jackin run` starts a capsule (CAPSULE_NODE_FLAGS in src/host/instances/container-run-argv.ts).
  const child = spawn(
    node,
    ['--max-semi-space-size=2', CAPSULE, 'serve', '--run-dir', runDir, '--workspace', workspace, '--name', name, '--', 'sleep', '100000'],
    { stdio: 'ignore' },
  );
  await waitForSocket(join(runDir, 'jackin.sock'), child);
  return child;
}

/** The zstd directory export uses under `node` ('node:zlib' or 'zstd-wasm'), as the built capsule picks it. */
function zstdImplementation(node) {
  const module = fileURLToPath(new URL('../../dist/capsule/export/zstd-compressor.js', import.meta.url));
  const r = spawnSync(node, ['--input-type=module', '-e', `import(${JSON.stringify(module)}).then((m) => process.stdout.write(m.zstdImplementation()))`], {
    encoding: 'utf8',
  });
  if (r.status !== 0 || r.stdout === '') throw new Error(`could not tell the zstd of ${node}: ${r.stderr}`);
  return r.stdout;
}

/** Runs `jackin export`, sampling its VmHWM until it exits. */
async function timedExport(env, args, node) {
  const r = await timedChild([node, JACKIN, 'export', ...args, '--json'], env);
  return { seconds: r.seconds, peakKiB: r.peakKiB, result: JSON.parse(r.out.trim().split('\n')[0]) };
}

function timed(fn) {
  const t0 = performance.now();
  fn();
  return (performance.now() - t0) / 1000;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * `nodes`: the Nodes to run jackin and the capsule with, `[{ version, path }]`, the bench's own first (the
 * one that built dist/ and its code caches: another Node refuses them and compiles the bundles).
 */
export async function run({ quick, log, nodes = [{ version: process.versions.node, path: process.execPath }] }) {
  const fileMiB = quick ? 256 : 1024;
  const treeMiB = quick ? 48 : 256;
  const runs = quick ? 1 : 3;
  // A directory export takes well under a second, so its ratio to tar moves with the machine's load from
  // one run to the next: more runs of it (cheap) steady the median.
  const dirRuns = quick ? 1 : 7;
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-export-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  const out = join(base, 'out');
  mkdirSync(ws, { recursive: true });
  mkdirSync(out, { recursive: true });
  const env = { ...process.env, JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: join(base, 'dl') };
  const data = { fileMiB, treeMiB, runs, dirRunCount: dirRuns, nodes: [] };
  const capsules = [];
  try {
    log(`export: writing a ${fileMiB} MiB random file and a ${treeMiB} MiB tree`);
    writeRandomFile(join(ws, 'big.bin'), fileMiB * MiB);
    data.treeBytes = writeTree(join(ws, 'tree'), treeMiB);

    const cp = () =>
      timed(() => {
        const dst = join(out, 'copy.bin');
        const r = spawnSync('cp', [join(ws, 'big.bin'), dst]);
        if (r.status !== 0) throw new Error('cp failed');
        const fd = openSync(dst, 'r');
        fsyncSync(fd);
        closeSync(fd);
        rmSync(dst);
      });
    const tar = () =>
      timed(() => {
        const dst = join(out, 'tree.tar.zst');
        const r = spawnSync('tar', ['--zstd', '-cf', dst, '-C', ws, 'tree']);
        if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
        rmSync(dst);
      });
    const perNode = [];
    for (const [i, node] of nodes.entries()) {
      const file = await startCapsule(home, `file-${i}`, ws, node.path);
      const dir = await startCapsule(home, `dir-${i}`, ws, node.path);
      capsules.push(file, dir);
      perNode.push({ i, node, file, dir, exp: [], dirTimes: [], dirCapsuleCpu: [], hostPeak: 0, dirHostPeak: 0 });
    }
    const exportOnce = async (p, kind) => {
      const capsule = kind === 'file' ? p.file : p.dir;
      const args = kind === 'file' ? ['--from', `file-${p.i}`, 'big.bin', '--to', join(out, 'e')] : ['--from', `dir-${p.i}`, 'tree', '--to', join(out, 'd')];
      const cpu0 = cpuOf(capsule.pid);
      const r = await timedExport(env, args, p.node.path);
      rmSync(r.result.destination);
      return { ...r, capsuleCpu: cpuOf(capsule.pid) - cpu0 };
    };
    // One discarded warm-up of each (the first cp reads the file once; the first writes of a run pay for
    // fresh page-cache pages), then the runs in turns: the baseline, then each Node's export.
    cp();
    tar();
    for (const p of perNode) {
      await exportOnce(p, 'file');
      await exportOnce(p, 'dir');
    }
    const cpTimes = [];
    const tarTimes = [];
    for (let i = 0; i < Math.max(runs, dirRuns); i++) {
      if (i < runs) {
        cpTimes.push(cp());
        for (const p of perNode) {
          const r = await exportOnce(p, 'file');
          p.exp.push(r.seconds);
          p.hostPeak = Math.max(p.hostPeak, r.peakKiB);
        }
      }
      if (i < dirRuns) {
        tarTimes.push(tar());
        for (const p of perNode) {
          const r = await exportOnce(p, 'dir');
          p.dirTimes.push(r.seconds);
          p.dirCapsuleCpu.push(r.capsuleCpu);
          p.dirHostPeak = Math.max(p.dirHostPeak, r.peakKiB);
        }
      }
    }
    data.cpSeconds = median(cpTimes);
    data.tarSeconds = median(tarTimes);
    data.tarRuns = tarTimes;
    log(`export: cp + fsync ${fmt(data.cpSeconds, 2)} s, tar ${fmt(data.tarSeconds, 2)} s`);
    for (const p of perNode) {
      const d = {
        node: p.node.version,
        zstd: zstdImplementation(p.node.path),
        exportSeconds: median(p.exp),
        exportHostPeakMiB: p.hostPeak / 1024,
        exportCapsulePeakMiB: (vmHwmKiB(p.file.pid) ?? NaN) / 1024,
        dirSeconds: median(p.dirTimes),
        dirRuns: p.dirTimes,
        dirCapsuleCpuSeconds: median(p.dirCapsuleCpu),
        dirHostPeakMiB: p.dirHostPeak / 1024,
        dirCapsulePeakMiB: (vmHwmKiB(p.dir.pid) ?? NaN) / 1024,
      };
      data.nodes.push(d);
      log(
        `export (Node ${d.node}, zstd ${d.zstd}): file ${fmt(d.exportSeconds, 2)} s, directory ${fmt(d.dirSeconds, 2)} s (capsule CPU ${fmt(d.dirCapsuleCpuSeconds, 2)} s), capsule RSS ${fmt(d.dirCapsulePeakMiB, 0)} MiB`,
      );
    }
  } finally {
    for (const c of capsules) c.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

const ZSTD_LABEL = { 'node:zlib': 'built-in zlib.createZstdCompress', 'zstd-wasm': 'WebAssembly @bokuweb/zstd-wasm' };

function render(d) {
  const mbps = (s, mib) => mib / s;
  const ok = (b) => (b ? 'met' : '**missed**');
  const cols = d.nodes;
  const row = (label, baseline, cell) => `| ${label} | ${baseline} | ${cols.map(cell).join(' | ')} |`;
  const lines = [
    `| measure | baseline | ${cols.map((n) => `jackin export, Node ${n.node} (zstd: ${ZSTD_LABEL[n.zstd] ?? n.zstd})`).join(' | ')} |`,
    `|---|---:|${cols.map(() => '---:').join('|')}|`,
    row(`${d.fileMiB} MiB file (s)`, `${fmt(d.cpSeconds, 2)} (cp + fsync)`, (n) => fmt(n.exportSeconds, 2)),
    row('file throughput (MiB/s)', fmt(mbps(d.cpSeconds, d.fileMiB), 0), (n) => fmt(mbps(n.exportSeconds, d.fileMiB), 0)),
    row("file: ratio to cp's throughput", '', (n) => `${fmt(d.cpSeconds / n.exportSeconds, 2)}×`),
    row(`${fmt(d.treeBytes / MiB, 0)} MiB directory (s)`, `${fmt(d.tarSeconds, 2)} (tar --zstd -cf)`, (n) => fmt(n.dirSeconds, 2)),
    row("directory: ratio to tar's time", '', (n) => `${fmt(n.dirSeconds / d.tarSeconds, 2)}×`),
    row('directory: capsule CPU per export (s)', '', (n) => fmt(n.dirCapsuleCpuSeconds, 2)),
    row('peak RSS, file: host / capsule (MiB)', '', (n) => `${fmt(n.exportHostPeakMiB, 0)} / ${fmt(n.exportCapsulePeakMiB, 0)}`),
    row('peak RSS, directory: host / capsule (MiB)', '', (n) => `${fmt(n.dirHostPeakMiB, 0)} / ${fmt(n.dirCapsulePeakMiB, 0)}`),
    '',
    `Median of ${d.runs} file run(s) and ${d.dirRunCount ?? d.runs} directory run(s), in turns (the baseline, then each Node's export, on the same files; tar runs: ${d.tarRuns.map((x) => fmt(x, 2)).join(', ')} s); the export includes starting \`jackin export\` (node), the policy check, SHA-256 on both sides, fsync and the no-replace publish. Page cache warm for every side. Directories compress at level 1 with the zstd each Node's capsule picked (in the header): Node's own \`zlib.createZstdCompress\` where the Node has it, else the WebAssembly \`@bokuweb/zstd-wasm\` (Node 20, 22.0-22.14).` +
      (cols.length > 1
        ? ` dist/ and its code caches were built by Node ${cols[0].node}; the other Nodes refuse those caches and compile the bundles at each start.`
        : ''),
    '',
  ];
  for (const n of cols) {
    const fileRatio = d.cpSeconds / n.exportSeconds;
    const dirRatio = n.dirSeconds / d.tarSeconds;
    lines.push(
      `Node ${n.node} (zstd: ${ZSTD_LABEL[n.zstd] ?? n.zstd}):`,
      '',
      `- at least 0.5× cp's throughput: ${fmt(fileRatio, 2)}× — ${ok(fileRatio >= 0.5)}`,
      `- within 1.5× of tar --zstd: ${fmt(dirRatio, 2)}× — ${ok(dirRatio <= 1.5)} (runs: ${n.dirRuns.map((x) => fmt(x, 2)).join(', ')} s)`,
      `- under 100 MiB peak RSS each side: ${ok(Math.max(n.exportHostPeakMiB, n.exportCapsulePeakMiB, n.dirHostPeakMiB, n.dirCapsulePeakMiB) < 100)}`,
      '',
    );
  }
  return lines.join('\n');
}
