/** The host's code-cache warm-up (src/cli/code-cache-warm-up.ts says why). */
import type { ServerFrame } from '../protocol/index.ts';
import { hello, SAMPLE } from './code-cache-warm-up.ts';

/** The host's side: the Hello framed, the capsule's frames decoded, a repaint through the terminal filter. */
export async function warmHost(): Promise<void> {
  const { TerminalFilter } = await import('../host/terminal/terminal-filter/filter.ts');
  const { createServerFrameDecoder, encodeClientFrame, encodeServerFrame } = await import('../protocol/index.ts');
  encodeClientFrame(await hello());
  const frames: ServerFrame[] = [
    { type: 'Welcome', sessions: 1, features: null },
    { type: 'Output', bytes: Buffer.from(SAMPLE) },
  ];
  const decoder = createServerFrameDecoder();
  const filter = new TerminalFilter();
  for (let i = 0; i < 3; i++) {
    for (const item of decoder.push(Buffer.concat(frames.map((f) => encodeServerFrame(f))))) {
      if (item.ok && item.frame.type === 'Output') filter.push(item.frame.bytes);
    }
  }
}
