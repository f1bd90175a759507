// Issue 5: paste latency, from the trigger (image bytes in the host's hands: the clipboard read is
// excluded) to the staged path echoed by the program, for 1, 16 and 64 MiB PNGs. The host side is the
// real one (imageFrames: one frame up to 16 MiB, else Start / 1 MiB chunks / End with SHA-256, writes
// awaiting drain); the capsule is a real `jackin-capsule serve -- cat` whose PTY echoes the typed path.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../lib/variants.mjs';
import { fmt, quantile } from '../lib/stats.mjs';
import { bigPng } from '../../test/helpers/png.mjs';

export const id = 'paste';
export const title = 'Paste: trigger to path in the program (clipboard read excluded)';

const MiB = 1024 * 1024;

export async function run({ quick, log }) {
  const proto = await import(join(REPO_ROOT, 'dist/protocol/index.js'));
  const { imageFrames } = await import(join(REPO_ROOT, 'dist/host/paste/paste-feature.js'));
  const runDir = mkdtempSync(join(tmpdir(), 'jackin-bench-paste-'));
  const capsule = spawn(
    process.execPath,
    ['--max-semi-space-size=2', join(REPO_ROOT, 'bin/jackin-capsule.js'), 'serve', '--run-dir', runDir, '--workspace', runDir, '--', 'cat'],
    {
      stdio: 'ignore',
    },
  );
  const samples = quick ? 3 : 10;
  const results = {};
  try {
    const socketPath = join(runDir, 'jackin.sock');
    let sock;
    for (let i = 0; ; i++) {
      try {
        sock = await new Promise((res, rej) => {
          const s = connect(socketPath);
          s.once('connect', () => res(s));
          s.once('error', rej);
        });
        break;
      } catch (e) {
        if (i > 500) throw e;
        await sleep(20);
      }
    }
    const decoder = proto.createServerFrameDecoder();
    let output = '';
    let features = null;
    const waiters = new Set();
    sock.on('data', (b) => {
      for (const item of decoder.push(b)) {
        if (!item.ok) continue;
        const f = item.frame;
        if (f.type === 'Welcome') features = f.features;
        if (f.type === 'Output') output += f.bytes.toString('latin1');
        for (const w of waiters) w(f);
      }
    });
    const write = (frame) => new Promise((res) => (sock.write(proto.encodeClientFrame(frame)) ? res() : sock.once('drain', res)));
    const caps = { pointerShapes: 'unset', truecolor: 'unset', synchronizedOutput: 'unset', osc8: 'unset', underlineStyle: 'unset', imageProtocol: 'unset' };
    await write({
      type: 'Hello',
      rows: 24,
      cols: 200,
      spawn: { kind: 'none' },
      env: [],
      focus: null,
      term: null,
      termProgram: null,
      colorTerm: null,
      fg: null,
      bg: null,
      caps,
      context: null,
    });
    while (features === null) await sleep(10);
    await write({ type: 'ExtHello', features: { 'image-staged': 1 } });
    let requestId = 1000n;
    for (const mib of [1, 16, 64]) {
      // 16 KiB under the size, so the 64 MiB image stays under the 64 MiB cap.
      const img = bigPng(mib * MiB - 16 * 1024);
      const times = [];
      for (let i = 0; i < samples; i++) {
        const id = requestId++;
        const from = output.length;
        const seen = new Promise((resolve, reject) => {
          const check = (f) => {
            if (f.type === 'AttachControlResponse' && f.requestId === id && f.result !== 'success') {
              waiters.delete(check);
              reject(new Error(`the capsule answered ${f.result} for the ${mib} MiB image`));
            } else if (/\/clipboard\/clip-[^\s]+\.png/.test(output.slice(from))) {
              waiters.delete(check);
              resolve();
            }
          };
          waiters.add(check);
        });
        const t0 = performance.now();
        for (const frame of imageFrames(id, 'png', img, { stageOnly: false })) await write(frame);
        await seen;
        times.push(performance.now() - t0);
        // Clear cat's line (Ctrl+U) so the next echo is fresh.
        await write({ type: 'Input', bytes: Buffer.from([0x15, 0x0d]) });
      }
      times.sort((a, b) => a - b);
      results[`${mib}MiB`] = { samples: times.length, p50: quantile(times, 0.5), max: times.at(-1), bytes: img.length };
      log(`paste: ${mib} MiB: p50 ${fmt(quantile(times, 0.5), 1)} ms`);
    }
    sock.destroy();
  } finally {
    capsule.kill('SIGTERM');
    await new Promise((r) => (capsule.exitCode !== null ? r() : capsule.once('exit', r)));
    rmSync(runDir, { recursive: true, force: true });
  }
  return { data: results, markdown: render(results, samples) };
}

function render(res, samples) {
  const row = (k) => `| ${k} | ${res[k]?.bytes ?? '-'} | ${fmt(res[k]?.p50, 1)} | ${fmt(res[k]?.max, 1)} |`;
  const p1 = res['1MiB']?.p50;
  const p64 = res['64MiB']?.p50;
  return [
    `${samples} pastes per size into \`jackin-capsule serve -- cat\` over its Unix socket (host frames as \`jackin\` sends them).`,
    '',
    '| image | bytes | p50 (ms) | max (ms) |',
    '|---|---:|---:|---:|',
    row('1MiB'),
    row('16MiB'),
    row('64MiB'),
    '',
    `- 1 MiB p50 ${fmt(p1, 1)} ms (target < 50 ms): ${p1 < 50 ? 'met' : 'missed'}`,
    `- 64 MiB p50 ${fmt(p64, 1)} ms (target < 1000 ms): ${p64 < 1000 ? 'met' : 'missed'}`,
    '',
  ].join('\n');
}
