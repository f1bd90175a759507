/**
 * The host side of "paste screenshots": the triggers (the paste key, an empty bracketed paste, a pasted
 * image path, three palette actions, and an upstream capsule's 0x8A/0x8B/0x8C requests), the clipboard
 * read, validation, and the transfer to the capsule (protocol.md section 4) with its answer.
 *
 * While a paste is in progress, typed input is held (FeatureSession.holdInput) and released after the
 * capsule answered, so keys typed meanwhile reach the program after the pasted path, in order. When the
 * clipboard holds no image, the trigger's own bytes go to the program before the held keys (Vim's Ctrl+V
 * keeps working). Program output keeps flowing throughout: the clipboard read is a child process, and a
 * large image goes in 1 MiB chunks, each sent after the transport drained.
 */
import { JackinError, type ErrorCode } from '../../errors.ts';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { hasFeature, type ControlResult, type ImageFormat, type ServerFrame } from '../../protocol/index.ts';
import { DEFAULT_MAX_IMAGE_BYTES } from '../../policy/image-signature.ts';
import { acquireClipboardImage } from '../platform/clipboard/acquire.ts';
import { readImageFile } from '../platform/clipboard/read-image-file.ts';
import { selectClipboardReader } from '../platform/clipboard/select.ts';
import type { ClipboardReader } from '../platform/clipboard/types.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { imageFrames } from './image-frames.ts';
import { parsePastedPath } from '../platform/pasted-path.ts';
import { formatBytes } from '../../ui/format-bytes.ts';

/** What the feature uses of the session (FeatureSession: tests drive it with a fake). */
export type PasteSession = FeatureSession;

export interface PasteFeatureOptions {
  env?: NodeJS.ProcessEnv;
  /** The clipboard backend; default chosen from `env` on first use. */
  reader?: ClipboardReader;
  /** Largest image accepted (default 64 MiB, the transfer cap). */
  maxBytes?: number;
  /** How long to wait for the capsule's answer after the last byte was sent. */
  responseTimeoutMs?: number;
}

/** What one paste does with the image: type its path, or only stage it. */
export type PasteMode = 'paste' | 'stage-only';

/** Where a paste came from; decides what happens when there is no image. */
export type PasteTrigger =
  /** The paste key: no image → its raw bytes go to the program, silently. */
  | { kind: 'key'; raw: Buffer }
  /** An empty bracketed paste (Cmd+V over an image-only clipboard): no image → raw bytes and a notice. */
  | { kind: 'empty-paste'; raw: Buffer }
  /** A bracketed paste that is one absolute path: not a readable image → the paste goes through as is. */
  | { kind: 'pasted-path'; raw: Buffer; path: string }
  /** A palette action or an upstream capsule's request: no image → a notice. */
  | { kind: 'action'; source: 'clipboard' | 'clipboard-path' };

export type PasteOutcome =
  | { kind: 'staged'; requestId: bigint; bytes: number; format: ImageFormat; path: string | null; pasted: boolean }
  | { kind: 'passed-through' }
  | { kind: 'no-image' }
  | { kind: 'failed'; code: ErrorCode; message: string }
  | { kind: 'rejected'; requestId: bigint; result: ControlResult }
  | { kind: 'timeout'; requestId: bigint };

export { imageFrames } from './image-frames.ts';

const DEFAULT_RESPONSE_TIMEOUT_MS = 30_000;
/** A pasted path that fails with one of these is ordinary text (no file, not a file, not an image). */
const NOT_AN_IMAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['E_PATH_NOT_FOUND', 'E_NOT_A_FILE', 'E_UNSUPPORTED_IMAGE', 'E_NO_CLIPBOARD_IMAGE', 'E_PATH_UNREADABLE']);

/** `JACKIN_PASTE_IMAGE_PATHS`: on unless 0/false/no/off (any case). */
export function pasteImagePathsEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env['JACKIN_PASTE_IMAGE_PATHS']?.trim().toLowerCase();
  return !(v === '0' || v === 'false' || v === 'no' || v === 'off');
}

interface Pending {
  resolve: (result: ControlResult) => void;
  staged: { bytes: number; pasted: boolean; path: string } | null;
}

export class PasteFeature implements Disposable {
  readonly #s: PasteSession;
  readonly #store = new DisposableStore();
  readonly #env: NodeJS.ProcessEnv;
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  #reader: ClipboardReader | undefined;
  readonly #pending = new Map<bigint, Pending>();
  /** Pastes run one at a time, in trigger order. */
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 0x5041_0000n; // "PA": apart from the session's own request ids (Detach is 1)
  #missingTold = false;

  constructor(session: PasteSession, opts: PasteFeatureOptions = {}) {
    this.#s = session;
    this.#env = opts.env ?? process.env;
    this.#reader = opts.reader;
    this.#maxBytes = opts.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
    this.#timeoutMs = opts.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS;
    const store = this.#store;
    store.add(session.onFrame((f) => this.#onFrame(f)));
    store.add(session.addInputHook('pasteKey', (ev) => this.onPasteKey(ev)));
    store.add(session.addInputHook('paste', (ev) => this.onPaste(ev)));
    const action = (id: string, title: string, key: string, trigger: PasteTrigger, mode: PasteMode) =>
      store.add(session.registerAction({ id, title, key, run: () => void this.trigger(trigger, mode) }));
    action('paste-image', 'Paste image from host clipboard', 'v', { kind: 'action', source: 'clipboard' }, 'paste');
    action('stage-image', 'Stage image without pasting', 's', { kind: 'action', source: 'clipboard' }, 'stage-only');
    action('stage-image-path', 'Stage image from clipboard path', 'p', { kind: 'action', source: 'clipboard-path' }, 'stage-only');
  }

  /** Removes the feature's hooks, actions and listeners. */
  dispose(): void {
    this.#store.dispose();
  }

  /**
   * A clipboard request from the capsule: honoured only from an upstream capsule the operator allowed, and
   * only on a palette key no other request used (session.admitUpstream).
   */
  #capsuleAsks(mode: PasteMode, source: 'clipboard' | 'clipboard-path'): void {
    if (this.#s.features !== null) {
      // Our capsule's palette runs on the host; a capsule that speaks our extensions never needs to ask.
      this.#s.notify('warning', 'Ignored a clipboard request from the capsule: the host reads the clipboard only when you ask');
      this.#s.logAction({ action: 'paste-image', target: source, result: 'refused', detail: 'a jackin capsule never asks for the clipboard' });
      return;
    }
    if (!this.#s.admitUpstream('clipboard', mode === 'paste' ? 'paste-image' : 'stage-image', source)) return;
    void this.trigger({ kind: 'action', source }, mode);
  }

  /**
   * Starts one paste now: input is held from this moment (call it synchronously from the trigger), the
   * paste runs after any earlier one, and the promise gives its outcome (already told to the operator).
   */
  trigger(trigger: PasteTrigger, mode: PasteMode): Promise<PasteOutcome> {
    const hold = this.#s.holdInput();
    const run = this.#queue.then(() => this.#run(trigger, mode));
    this.#queue = run.catch(() => undefined);
    return run.finally(() => hold.dispose());
  }

  /** The hook for paste-key events (the key and an empty bracketed paste). */
  onPasteKey(ev: InputEvent): boolean {
    if (ev.type !== 'paste-key') return false;
    const trigger: PasteTrigger = ev.source === 'empty-paste' ? { kind: 'empty-paste', raw: ev.raw } : { kind: 'key', raw: ev.raw };
    void this.trigger(trigger, 'paste');
    return true;
  }

  /** The hook for bracketed pastes: claims only a paste that is exactly one absolute path. */
  onPaste(ev: InputEvent): boolean {
    if (ev.type !== 'paste' || !pasteImagePathsEnabled(this.#env)) return false;
    const path = parsePastedPath(ev.content);
    if (path === null) return false;
    void this.trigger({ kind: 'pasted-path', raw: ev.raw, path }, 'paste');
    return true;
  }

  /**
   * A pasted or copied path whose symlinks lead elsewhere (host-file.ts) is read only once the operator
   * confirmed the file it leads to: the container may have made the name, in a directory it shares.
   */
  readonly #confirmRedirect = (given: string, real: string): Promise<boolean> => this.#s.confirm({ kind: 'stage', target: real, label: given });

  #reader_(): ClipboardReader {
    this.#reader ??= selectClipboardReader(this.#env);
    return this.#reader;
  }

  async #run(trigger: PasteTrigger, mode: PasteMode): Promise<PasteOutcome> {
    let image: { format: ImageFormat; bytes: Buffer } | null;
    try {
      image = await this.#acquire(trigger);
    } catch (e) {
      return this.#acquireFailed(trigger, e);
    }
    if (image === null) {
      switch (trigger.kind) {
        case 'key':
          this.#s.sendInput(trigger.raw);
          return { kind: 'passed-through' };
        case 'empty-paste':
          this.#s.sendInput(trigger.raw);
          this.#s.notify('warning', 'Image not pasted: no image on the host clipboard');
          this.#logFailed(trigger, 'no image on the host clipboard');
          return { kind: 'no-image' };
        case 'pasted-path':
          this.#s.sendInput(trigger.raw);
          return { kind: 'passed-through' };
        case 'action': {
          const why = trigger.source === 'clipboard-path' ? 'the host clipboard names no image file' : 'no image on the host clipboard';
          this.#s.notify(
            'warning',
            trigger.source === 'clipboard-path'
              ? 'Image not staged: the host clipboard names no image file (copy a file, or one absolute path)'
              : 'Image not pasted: no image on the host clipboard',
          );
          this.#logFailed(trigger, why);
          return { kind: 'no-image' };
        }
        default: {
          const never: never = trigger;
          throw new TypeError(`unexpected trigger ${JSON.stringify(never)}`);
        }
      }
    }
    return this.#send(image, mode);
  }

  async #acquire(trigger: PasteTrigger): Promise<{ format: ImageFormat; bytes: Buffer } | null> {
    switch (trigger.kind) {
      case 'pasted-path':
        try {
          return await readImageFile(trigger.path, this.#maxBytes, this.#confirmRedirect);
        } catch (e) {
          // Not a readable image (missing, a directory, text): the paste is ordinary text.
          if (e instanceof JackinError && NOT_AN_IMAGE_CODES.has(e.code)) return null;
          throw e;
        }
      case 'action':
        if (trigger.source === 'clipboard-path') {
          const path = await this.#reader_().readPath();
          return path === null ? null : readImageFile(path, this.#maxBytes, this.#confirmRedirect);
        }
        return acquireClipboardImage(this.#reader_(), this.#maxBytes, this.#confirmRedirect);
      case 'key':
      case 'empty-paste':
        return acquireClipboardImage(this.#reader_(), this.#maxBytes, this.#confirmRedirect);
      default: {
        const never: never = trigger;
        throw new TypeError(`unexpected trigger ${JSON.stringify(never)}`);
      }
    }
  }

  #acquireFailed(trigger: PasteTrigger, e: unknown): PasteOutcome {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    const message = e instanceof Error ? e.message : String(e);
    const missing = code === 'E_CLIPBOARD_BACKEND_MISSING' || code === 'E_BAD_CLIPBOARD_BACKEND';
    if (trigger.kind === 'pasted-path') {
      // A real image we cannot send (too large): the text still goes through, and the operator learns why.
      this.#s.sendInput(trigger.raw);
      this.#s.notify('warning', `Pasted path not staged: ${message}`);
      this.#logFailed(trigger, `${code}: ${message}`);
      return { kind: 'failed', code, message };
    }
    if (trigger.kind === 'key' && missing) {
      // No clipboard tool here (an SSH session): the key keeps its meaning for the program; said once.
      this.#s.sendInput(trigger.raw);
      if (this.#missingTold) return { kind: 'failed', code, message };
      this.#missingTold = true;
    }
    this.#s.notify('error', `Image not pasted: ${message}`);
    this.#logFailed(trigger, `${code}: ${message}`);
    return { kind: 'failed', code, message };
  }

  /** A paste the operator asked for that ended before anything was sent: in the host's record too. */
  #logFailed(trigger: PasteTrigger, detail: string): void {
    const target = trigger.kind === 'pasted-path' ? trigger.path : trigger.kind === 'action' ? trigger.source : 'clipboard';
    this.#s.logAction({ action: 'paste-image', target, result: 'failed', detail });
  }

  async #send(image: { format: ImageFormat; bytes: Buffer }, mode: PasteMode): Promise<PasteOutcome> {
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
      this.#s.logAction({ action: 'send-image', target: `${image.format} image, ${image.bytes.length} bytes`, result: 'ok', ...(staged !== null ? { detail: staged.path } : {}) });
      if (staged !== null) {
        this.#s.notify(
          'success',
          staged.pasted
            ? `Image staged: ${staged.path} (${size})`
            : `Image staged, not pasted (stage only): ${staged.path} (${size})`,
        );
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
      // An upstream capsule's palette asks us to read the clipboard (the operator chose it there): only
      // right after the operator's palette key, once (see #capsuleAsks).
      case 'HostPasteImageFromClipboard':
        this.#capsuleAsks('paste', 'clipboard');
        return;
      case 'HostStageImageFromClipboard':
        this.#capsuleAsks('stage-only', 'clipboard');
        return;
      case 'HostStageImageFromClipboardPath':
        this.#capsuleAsks('stage-only', 'clipboard-path');
        return;
      default:
        return;
    }
  }
}

/** Installs the paste feature on a session (before `start()`): hooks, palette actions, capsule requests. */
export function installPasteFeature(session: PasteSession, opts: PasteFeatureOptions = {}): PasteFeature {
  return new PasteFeature(session, opts);
}
