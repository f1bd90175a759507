// Issue 17: `jackin stage` of a 256 MiB file into a capsule against `cp` of the same file into the same
// file system, in the same run, with the CPU time each one costs (host `jackin stage`, capsule, `cp`).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from '../lib/stats.mjs';
import { writeRandomFile } from '../lib/files.mjs';
import { cpuOf, timedChild, vmHwmKiB } from '../lib/processes.mjs';
import { median, startCapsule } from './export.mjs';

export const id = 'stage';
export const title = 'Stage: a host file into the capsule against cp';

const root = fileURLToPath(new URL('../..', import.meta.url));
const JACKIN = join(root, 'bin', 'jackin.js');
const MiB = 1024 * 1024;
export async function run({ quick, log }) {
  const fileMiB = 256;
  const runs = quick ? 1 : 5;
  const base = mkdtempSync(join(tmpdir(), 'jackin-bench-stage-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(ws, { recursive: true });
  const env = { ...process.env, JACKIN_HOME: home };
  const data = { fileMiB, runs };
  let capsule;
  try {
    log(`stage: writing a ${fileMiB} MiB random file`);
    const src = join(base, 'big.bin');
    writeRandomFile(src, fileMiB * MiB);
    capsule = await startCapsule(home, 'stage', ws);
    const runDir = join(home, 'sockets', 'stage');
    const cpDst = join(runDir, 'cp-copy.bin');
    const cp = [];
    const st = [];
    // cp and jackin stage alternate, each right after the previous copy was deleted (bench/README.md); the
    // first round is a discarded warm-up for both.
    for (let i = 0; i < runs + 1; i++) {
      const c = await timedChild(['cp', src, cpDst], env);
      rmSync(cpDst);
      const capsuleCpu0 = cpuOf(capsule.pid);
      const s = await timedChild([process.execPath, JACKIN, 'stage', '--to', 'stage', '--json', src], env);
      const result = JSON.parse(s.out.trim().split('\n')[0]);
      s.capsuleCpu = cpuOf(capsule.pid) - capsuleCpu0;
      rmSync(dirname(result.destination), { recursive: true, force: true });
      if (i === 0) continue;
      cp.push(c);
      st.push(s);
    }
    data.cpSeconds = median(cp.map((r) => r.seconds));
    data.cpCpu = median(cp.map((r) => r.cpu));
    data.stageSeconds = median(st.map((r) => r.seconds));
    data.stageHostCpu = median(st.map((r) => r.cpu));
    data.stageCapsuleCpu = median(st.map((r) => r.capsuleCpu));
    data.stageHostPeakMiB = Math.max(...st.map((r) => r.peakKiB)) / 1024;
    data.stageCapsulePeakMiB = (vmHwmKiB(capsule.pid) ?? NaN) / 1024;
    log(
      `stage: cp ${fmt(data.cpSeconds, 2)} s, jackin stage ${fmt(data.stageSeconds, 2)} s (CPU host ${fmt(data.stageHostCpu, 2)} s, capsule ${fmt(data.stageCapsuleCpu, 2)} s)`,
    );
  } finally {
    capsule?.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  }
  return { data, markdown: render(data) };
}

function render(d) {
  const ratio = d.cpSeconds / d.stageSeconds;
  return [
    `| measure | cp | jackin stage | ratio |`,
    `|---|---:|---:|---:|`,
    `| ${d.fileMiB} MiB file (s) | ${fmt(d.cpSeconds, 2)} | ${fmt(d.stageSeconds, 2)} | ${fmt(ratio, 2)}× cp's throughput |`,
    `| throughput (MiB/s) | ${fmt(d.fileMiB / d.cpSeconds, 0)} | ${fmt(d.fileMiB / d.stageSeconds, 0)} | |`,
    `| CPU (s, user + system) | ${fmt(d.cpCpu, 2)} | host ${fmt(d.stageHostCpu, 2)} + capsule ${fmt(d.stageCapsuleCpu, 2)} | |`,
    `| peak RSS: host / capsule (MiB) | | ${fmt(d.stageHostPeakMiB, 0)} / ${fmt(d.stageCapsulePeakMiB, 0)} | |`,
    '',
    `Median of ${d.runs} run(s) after a discarded warm-up; cp and \`jackin stage\` alternate, both into the capsule's run directory. The stage includes starting \`jackin stage\` (node), the host checks, the control request, SHA-256 on both sides and the create-new publish; neither side fsyncs.`,
    '',
    `- at least 0.5× cp's throughput: ${fmt(ratio, 2)}× — ${ratio >= 0.5 ? 'met' : '**missed**'}`,
    '',
  ].join('\n');
}
