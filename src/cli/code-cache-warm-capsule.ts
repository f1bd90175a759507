/** The capsule's code-cache warm-up (src/cli/code-cache-warm-up.ts says why). */
import { hello, SAMPLE } from './code-cache-warm-up.ts';

/** The capsule's side of a first attach: the Hello decoded, the screen model fed, repainted and framed. */
export async function warmCapsule(): Promise<void> {
  const { ScreenModel } = await import('../capsule/screen/screen-model.ts');
  const { createClientFrameDecoder, encodeClientFrame, encodeServerFrame } = await import('../protocol/index.ts');
  createClientFrameDecoder().push(encodeClientFrame(await hello()));
  const model = new ScreenModel({ rows: 30, cols: 120 });
  try {
    for (let i = 0; i < 3; i++) {
      model.write(Buffer.from(SAMPLE));
      await model.settle();
      encodeServerFrame({ type: 'Output', bytes: model.repaint() });
    }
  } finally {
    model.dispose();
  }
}
