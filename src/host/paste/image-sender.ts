/**
 * The image half of a paste, once the image is in the host's hands: its frames to the capsule
 * (image-frames.ts, each sent after the transport drained), the capsule's answer (AttachControlResponse, and
 * ImageStaged with the container path from our capsule), and what the operator is told and the host's
 * record keeps about it.
 */
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { hasFeature, type ControlResult, type ImageFormat, type ServerFrame } from '../../protocol/index.ts';
import { formatBytes } from '../../ui/format-bytes.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import { imageFrames } from './image-frames.ts';

/** What the sender uses of the session. */
export type ImageSenderSession = Pick<FeatureSession, 'features' | 'onFrame' | 'sendFrame' | 'drained' | 'notify' | 'logAction'>;

/** What one paste does with the image: type its path, or only stage it. */
export type PasteMode = 'paste' | 'stage-only';

export type ImageSendOutcome =
  | { kind: 'staged'; requestId: bigint; bytes: number; format: ImageFormat; path: string | null; pasted: boolean }
  | { kind: 'rejected'; requestId: bigint; result: ControlResult }
  | { kind: 'timeout'; requestId: bigint };

interface Pending {
  resolve: (result: ControlResult) => void;
  staged: { bytes: number; pasted: boolean; path: string } | null;
}

export class ImageSender implements Disposable {
  readonly #s: ImageSenderSession;
  readonly #timeoutMs: number;
  readonly #store = new DisposableStore();
  readonly #pending = new Map<bigint, Pending>();
  #nextId = 0x5041_0000n; // "PA": apart from the session's own request ids (Detach is 1)

  constructor(session: ImageSenderSession, responseTimeoutMs: number) {
    this.#s = session;
    this.#timeoutMs = responseTimeoutMs;
    this.#store.add(session.onFrame((f) => this.#onFrame(f)));
  }

  dispose(): void {
    this.#store.dispose();
  }

  /** Sends one validated image and waits for the capsule's answer; the outcome is already told. */
  async send(image: { format: ImageFormat; bytes: Buffer }, mode: PasteMode): Promise<ImageSendOutcome> {
    const requestId = this.#nextId++;
    const features = this.#s.features;
    let pending!: Pending;
    const answer = new Promise<ControlResult>((resolve) => {
      pending = { resolve, staged: null };
      this.#pending.set(requestId, pending);
    });
    let answered = false;
    void answer.then(() => (answered = true));
    try {
      const stageOnly = mode === 'stage-only' && hasFeature(features, 'stage-only');
      for (const frame of imageFrames(requestId, image.format, image.bytes, { stageOnly })) {
        // A rejected Start (or an early chunk error) is answered at once: stop sending the rest.
        if (answered) break;
        if (!this.#s.sendFrame(frame)) await this.#s.drained();
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.#timeoutMs);
      });
      const result = await Promise.race([answer, timeout]);
      clearTimeout(timer);
      if (result === 'timeout') {
        this.#s.notify('error', `Image not confirmed: the capsule did not answer within ${Math.round(this.#timeoutMs / 1000)} s`);
        this.#s.logAction({ action: 'send-image', target: `${image.format} image`, result: 'failed', detail: 'no answer from the capsule' });
        return { kind: 'timeout', requestId };
      }
      if (result !== 'success') {
        // Our capsule told the operator why (a Notice); an upstream one may not have.
        if (features === null) this.#s.notify('error', `Image rejected by the capsule (${result})`);
        this.#s.logAction({ action: 'send-image', target: `${image.format} image`, result: 'failed', detail: `rejected by the capsule (${result})` });
        return { kind: 'rejected', requestId, result };
      }
      const staged = pending.staged;
      const size = `${formatBytes(image.bytes.length)} ${image.format}`;
      this.#s.logAction({
        action: 'send-image',
        target: `${image.format} image, ${image.bytes.length} bytes`,
        result: 'ok',
        ...(staged !== null ? { detail: staged.path } : {}),
      });
      if (staged !== null) {
        this.#s.notify('success', staged.pasted ? `Image staged: ${staged.path} (${size})` : `Image staged, not pasted (stage only): ${staged.path} (${size})`);
      } else if (!hasFeature(features, 'image-staged')) {
        // The capsule does not report the path (upstream): it showed its own notice; this one is ours.
        this.#s.notify('success', `Image sent to the capsule (${size})`);
      }
      return {
        kind: 'staged',
        requestId,
        bytes: image.bytes.length,
        format: image.format,
        path: staged?.path ?? null,
        pasted: staged?.pasted ?? mode === 'paste',
      };
    } finally {
      this.#pending.delete(requestId);
    }
  }

  #onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'AttachControlResponse':
        this.#pending.get(f.requestId)?.resolve(f.result);
        return;
      case 'ImageStaged': {
        const p = this.#pending.get(f.requestId);
        if (p !== undefined) p.staged = { bytes: f.bytes, pasted: f.pasted, path: f.path };
        return;
      }
      default:
        return;
    }
  }
}
