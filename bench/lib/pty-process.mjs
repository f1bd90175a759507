// A program on a pseudo-terminal driven by the benchmark: the bench process plays the operator's terminal.
import pty from '@lydell/node-pty';

export const BENCH_ROWS = 30;
export const BENCH_COLS = 120;

/**
 * Spawns `file args` on a new PTY. Output is kept binary (encoding null) and handed to the current
 * listener; `waitFor` resolves when a predicate over the output seen since the call holds.
 */
export function spawnOnPty(file, args, { env, cwd } = {}) {
  const term = pty.spawn(file, args, {
    name: 'xterm-256color',
    rows: BENCH_ROWS,
    cols: BENCH_COLS,
    cwd: cwd ?? process.cwd(),
    env: env ?? process.env,
    encoding: null,
  });
  let listener = null;
  let exited = null;
  const exitWaiters = [];
  term.onData((data) => {
    if (listener) listener(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  });
  term.onExit((e) => {
    exited = e;
    for (const w of exitWaiters.splice(0)) w(e);
  });
  return {
    pid: term.pid,
    write: (data) => term.write(data),
    /** Calls `onChunk(buffer)` for every chunk until it returns true; rejects after `timeoutMs`. */
    consume(onChunk, { timeoutMs = 30_000, what = 'output' } = {}) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listener = null;
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        listener = (chunk) => {
          if (onChunk(chunk)) {
            listener = null;
            clearTimeout(timer);
            resolve();
          }
        };
      });
    },
    /** Resolves once `marker` (a string) has appeared in the output after this call. */
    waitForText(marker, opts = {}) {
      const needle = Buffer.from(marker);
      let tail = Buffer.alloc(0);
      return this.consume(
        (chunk) => {
          const joined = Buffer.concat([tail, chunk]);
          if (joined.includes(needle)) return true;
          tail = joined.subarray(Math.max(0, joined.length - needle.length + 1));
          return false;
        },
        { what: JSON.stringify(marker), ...opts },
      );
    },
    exited: () => exited,
    waitForExit(timeoutMs = 5000) {
      if (exited) return Promise.resolve(exited);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('program did not exit')), timeoutMs);
        exitWaiters.push((e) => {
          clearTimeout(timer);
          resolve(e);
        });
      });
    },
    kill(signal = 'SIGKILL') {
      if (exited) return;
      try {
        term.kill(signal);
      } catch {
        /* already gone */
      }
    },
  };
}
