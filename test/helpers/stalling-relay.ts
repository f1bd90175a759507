import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellQuote } from './tmux.ts';

/** Bytes the relay passes in each direction before it stops reading: well into a 32 MiB transfer. */
const STALL_AFTER_BYTES = 4 * 1024 * 1024;

/**
 * An --exec relay command to the capsule socket `socket` that passes STALL_AFTER_BYTES each way, then stops
 * reading: a transfer through it stalls midway, so a test can act while it is surely in flight. The script
 * is written into `dir`.
 */
export function stallingRelay(dir: string, socket: string): string {
  const script = join(dir, 'stall-relay.mjs');
  writeFileSync(
    script,
    `
import { connect } from 'node:net';
import { basename, dirname } from 'node:path';
// Named from its directory: the absolute path can exceed a socket address's limit under a long TMPDIR.
process.chdir(dirname(process.argv[2]));
const s = connect(basename(process.argv[2]));
// Ends with jackin (a real relay ends on stdin EOF, which a paused stdin never sees).
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 50);
let up = 0;
let down = 0;
s.on('data', (b) => {
  if (down > ${STALL_AFTER_BYTES}) { s.pause(); return; }
  down += b.length;
  process.stdout.write(b);
});
process.stdin.on('data', (b) => {
  if (up > ${STALL_AFTER_BYTES}) { process.stdin.pause(); return; }
  up += b.length;
  s.write(b);
});
`,
  );
  return `exec ${[process.execPath, script, socket].map(shellQuote).join(' ')}`;
}
