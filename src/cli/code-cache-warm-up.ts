/**
 * What the build runs in each CLI's bundle before it writes that bundle's code cache (scripts/bundle.mjs,
 * src/cli/code-cache.ts). V8 compiles a function only when it first runs, and a cache holds only what was
 * compiled when it was made: made right after loading, it held the modules' top levels and nothing of the
 * attach path. These run that path once, on a sample screen, so the cache also holds the functions of the
 * first attach: the capsule's screen model (xterm's parser and serializer, bundled in with it) and frames,
 * and the host's terminal filter and frames. Nothing here touches a file, a socket or the terminal.
 *
 * This module holds what both sides feed; code-cache-warm-capsule.ts and code-cache-warm-host.ts each run
 * one side, exported by that CLI's entry as `warmUpForCodeCache` (one module each, so neither bundle
 * takes in the other side's code).
 */
import type { ClientFrame } from '../protocol/index.ts';

/** A prompt and the kind of output an agent prints: colours, a wide character, a hyperlink, a title. */
export const SAMPLE =
  '\x1b]0;agent\x07\x1b[?2004h\x1b[1;32mbench\x1b[0m:\x1b[34m~/work\x1b[0m$ ls --color\r\n' +
  '\x1b[0m\x1b[01;34mdist\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  README.md  漢字.txt\r\n' +
  'see \x1b]8;;https://example.com/docs\x1b\\https://example.com/docs\x1b]8;;\x1b\\ for more\r\n' +
  '\x1b[38;5;208m  warning\x1b[39m: \x1b[4munused\x1b[24m variable `x`\r\n' +
  '\x1b[?25l\x1b[2K\r\x1b[7m 42% \x1b[27m\x1b[?25h\r\n$ ';

/** The Hello `jackin` sends from a 120x30 terminal (src/host/session/handshake.ts: a small module, in both bundles). */
export async function hello(): Promise<ClientFrame> {
  const { helloFrame } = await import('../host/session/handshake.ts');
  return helloFrame({ rows: 30, cols: 120 }, { TERM: 'xterm-256color' });
}
