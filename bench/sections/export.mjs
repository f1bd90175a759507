// Issue 6: export throughput of a large file against `cp` + fsync of the copy, directory export against
// GNU `tar --zstd -cf` of the same tree, and peak RSS (VmHWM) of the capsule and of `jackin export`.
import { spawn, spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from '../lib/stats.mjs';
import { writeRandomFile } from '../lib/files.mjs';
import { timedChild, vmHwmKiB } from '../lib/processes.mjs';

export const id = 'export';
export const title = 'Export: file and directory throughput, peak memory';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CAPSULE = join(root, 'bin', 'jackin-capsule.js');
const JACKIN = join(root, 'bin', 'jackin.js');
const MiB = 1024 * 1024;



/** A tree of compressible text and random files, like a build output. */
function writeTree(dir, totalMiB) {
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

export async function startCapsule(home, name, workspace) {
  const runDir = join(home, 'sockets', name);
  // Started as `jackin run` starts a capsule (CAPSULE_NODE_FLAGS in src/host/instances/container-run-argv.ts).
  const child = spawn(process.execPath, ['--max-semi-space-size=2', CAPSULE, 'serve', '--run-dir', runDir, '--workspace', workspace, '--name', name, '--', 'sleep', '100000'], { stdio: 'ignore' });
  await waitForSocket(join(runDir, 'jackin.sock'), child);
  return child;
}

/** Runs `jackin export`, sampling its VmHWM until it exits. */
async function timedExport(env, args) {
  const r = await timedChild([process.execPath, JACKIN, 'export', ...args, '--json'], env);
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

export async function run({ quick, log }) {
  const fileMiB = quick ? 256 : 1024;
  const treeMiB = quick ? 48 : 256;
  const runs = quick ? 1 : 3;
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-export-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  const out = join(base, 'out');
  mkdirSync(ws, { recursive: true });
  mkdirSync(out, { recursive: true });
  const env = { ...process.env, JACKIN_HOME: home, JACKIN_DOWNLOAD_DIR: join(base, 'dl') };
  const data = { fileMiB, treeMiB, runs };
  const capsules = [];
  try {
    log(`export: writing a ${fileMiB} MiB random file and a ${treeMiB} MiB tree`);
    writeRandomFile(join(ws, 'big.bin'), fileMiB * MiB);
    data.treeBytes = writeTree(join(ws, 'tree'), treeMiB);

    // cp + fsync of the copy (warm cache for both sides: the first cp reads the file once).
    const cpTimes = [];
    for (let i = 0; i < runs + 1; i++) {
      const dst = join(out, 'copy.bin');
      const s = timed(() => {
        const r = spawnSync('cp', [join(ws, 'big.bin'), dst]);
        if (r.status !== 0) throw new Error('cp failed');
        const fd = openSync(dst, 'r');
        fsyncSync(fd);
        closeSync(fd);
      });
      rmSync(dst);
      if (i > 0) cpTimes.push(s);
    }
    data.cpSeconds = median(cpTimes);
    log(`export: cp + fsync ${fmt(data.cpSeconds, 2)} s`);

    const fileCapsule = await startCapsule(home, 'file', ws);
    capsules.push(fileCapsule);
    const exp = [];
    let hostPeak = 0;
    // One discarded warm-up run, as cp gets: the first writes of a run pay for fresh page-cache pages.
    rmSync((await timedExport(env, ['--from', 'file', 'big.bin', '--to', join(out, 'e')])).result.destination);
    for (let i = 0; i < runs; i++) {
      const r = await timedExport(env, ['--from', 'file', 'big.bin', '--to', join(out, 'e')]);
      rmSync(r.result.destination);
      exp.push(r.seconds);
      hostPeak = Math.max(hostPeak, r.peakKiB);
    }
    data.exportSeconds = median(exp);
    data.exportHostPeakMiB = hostPeak / 1024;
    data.exportCapsulePeakMiB = (vmHwmKiB(fileCapsule.pid) ?? NaN) / 1024;
    log(`export: jackin export ${fmt(data.exportSeconds, 2)} s, RSS host ${fmt(data.exportHostPeakMiB, 0)} MiB, capsule ${fmt(data.exportCapsulePeakMiB, 0)} MiB`);

    const tarTimes = [];
    for (let i = 0; i < runs; i++) {
      const dst = join(out, 'tree.tar.zst');
      tarTimes.push(timed(() => {
        const r = spawnSync('tar', ['--zstd', '-cf', dst, '-C', ws, 'tree']);
        if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
      }));
      rmSync(dst);
    }
    data.tarSeconds = median(tarTimes);
    const dirCapsule = await startCapsule(home, 'dir', ws);
    capsules.push(dirCapsule);
    const dirTimes = [];
    let dirHostPeak = 0;
    rmSync((await timedExport(env, ['--from', 'dir', 'tree', '--to', join(out, 'd')])).result.destination);
    for (let i = 0; i < runs; i++) {
      const r = await timedExport(env, ['--from', 'dir', 'tree', '--to', join(out, 'd')]);
      rmSync(r.result.destination);
      dirTimes.push(r.seconds);
      dirHostPeak = Math.max(dirHostPeak, r.peakKiB);
    }
    data.dirSeconds = median(dirTimes);
    data.dirHostPeakMiB = dirHostPeak / 1024;
    data.dirCapsulePeakMiB = (vmHwmKiB(dirCapsule.pid) ?? NaN) / 1024;
    log(`export: tar ${fmt(data.tarSeconds, 2)} s, directory export ${fmt(data.dirSeconds, 2)} s, capsule ${fmt(data.dirCapsulePeakMiB, 0)} MiB`);
  } finally {
    for (const c of capsules) c.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

function render(d) {
  const mbps = (s, mib) => mib / s;
  const fileRatio = d.cpSeconds / d.exportSeconds;
  const dirRatio = d.dirSeconds / d.tarSeconds;
  const ok = (b) => (b ? 'met' : '**missed**');
  return [
    `| measure | baseline | jackin export | ratio |`,
    `|---|---:|---:|---:|`,
    `| ${d.fileMiB} MiB file (s) | ${fmt(d.cpSeconds, 2)} (cp + fsync) | ${fmt(d.exportSeconds, 2)} | ${fmt(fileRatio, 2)}× cp's throughput |`,
    `| file throughput (MiB/s) | ${fmt(mbps(d.cpSeconds, d.fileMiB), 0)} | ${fmt(mbps(d.exportSeconds, d.fileMiB), 0)} | |`,
    `| ${fmt(d.treeBytes / MiB, 0)} MiB directory (s) | ${fmt(d.tarSeconds, 2)} (tar --zstd -cf) | ${fmt(d.dirSeconds, 2)} | ${fmt(dirRatio, 2)}× tar's time |`,
    `| peak RSS, file: host / capsule (MiB) | | ${fmt(d.exportHostPeakMiB, 0)} / ${fmt(d.exportCapsulePeakMiB, 0)} | |`,
    `| peak RSS, directory: host / capsule (MiB) | | ${fmt(d.dirHostPeakMiB, 0)} / ${fmt(d.dirCapsulePeakMiB, 0)} | |`,
    '',
    `Median of ${d.runs} run(s); the export includes starting \`jackin export\` (node), the policy check, SHA-256 on both sides, fsync and the no-replace publish. Page cache warm for every side.`,
    '',
    `- at least 0.5× cp's throughput: ${fmt(fileRatio, 2)}× — ${ok(fileRatio >= 0.5)}`,
    `- within 1.5× of tar --zstd: ${fmt(dirRatio, 2)}× — ${ok(dirRatio <= 1.5)}`,
    `- under 100 MiB peak RSS each side: ${ok(Math.max(d.exportHostPeakMiB, d.exportCapsulePeakMiB, d.dirHostPeakMiB, d.dirCapsulePeakMiB) < 100)}`,
    '',
  ].join('\n');
}
