/**
 * The host's one paste affordance: host content in on paste. Its triggers are the paste key (Ctrl+V), an
 * empty bracketed paste (Cmd+V over an image-only clipboard), a bracketed paste of host paths (typed, or
 * files dropped on the terminal), three palette actions, and an upstream capsule's 0x8A/0x8B/0x8C requests.
 * One paste reads the clipboard once (paste key, palette) and routes what it found:
 *
 * - an image, or one copied or pasted image file, goes to the capsule as an image (image-sender.ts,
 *   protocol.md section 4), which stages it under `clipboard/` and types its path;
 * - copied files and pasted paths of any other file, when the capsule stages files (`file-stage`) and
 *   JACKIN_PASTE_FILE_PATHS is not off, are staged under `files/` (stage-paths.ts) and the program gets the
 *   container paths in place of the host paths, quoted as they were, inside the same paste, never followed
 *   by Enter. A paste with any word that is not an existing path is text, forwarded unchanged;
 * - nothing: the paste key's own bytes go to the program (Vim's Ctrl+V keeps working), silently.
 *
 * Pastes run one at a time, in trigger order. While one is in progress, typed input is held
 * (FeatureSession.holdInput) and released after it ended, so keys typed meanwhile reach the program after
 * the paste, in order. Program output keeps flowing throughout: the clipboard read is a child process, and
 * a large image goes in 1 MiB chunks, each sent after the transport drained.
 *
 * Whatever the paste types goes in bracketed-paste markers exactly when the program asked for them
 * (FeatureSession.programModes, the host filter's reading of its output), as an unclaimed paste does.
 */
import { hasCode, isRefusal, JackinError, type ErrorCode } from '../../errors.ts';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { hasFeature, type ImageFormat, type ServerFrame } from '../../protocol/index.ts';
import { DEFAULT_MAX_IMAGE_BYTES } from '../../policy/image-signature.ts';
import { envSwitch } from '../../policy/env-switch.ts';
import type { Transport } from '../../transport/transport.ts';
import { contentImage } from '../platform/clipboard/acquire.ts';
import { hasImageSignature, readImageFile } from '../platform/clipboard/read-image-file.ts';
import { selectClipboardReader } from '../platform/clipboard/select.ts';
import { TerminalClipboardReader, type PasteEvent } from '../platform/clipboard/terminal-reader.ts';
import type { HostServices } from '../platform/host-services.ts';
import type { ClipboardContent, ClipboardReader } from '../platform/clipboard/types.ts';
import { parsePastedPath } from '../platform/pasted-path.ts';
import { parsePastedPaths, renderPath, rewritePaste, type PastedPaths } from '../platform/pasted-paths.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { ImageSender, type ImageSendOutcome, type PasteMode } from './image-sender.ts';
import { stagePaths } from './stage-paths.ts';

/** What the affordance uses of the session (tests drive it with a fake). */
export type PasteSession = Pick<
  FeatureSession,
  | 'features'
  | 'onFrame'
  | 'onWelcome'
  | 'addInputHook'
  | 'addInputTap'
  | 'registerAction'
  | 'holdInput'
  | 'notify'
  | 'logAction'
  | 'confirm'
  | 'admitUpstream'
  | 'sendFrame'
  | 'sendInput'
  | 'drained'
  | 'programModes'
  | 'setHostNeeds'
>;

export interface PasteFeatureOptions {
  env?: NodeJS.ProcessEnv;
  /** The session's host services: the clipboard reader and the switches, unless `reader`/`env` say otherwise. */
  services?: HostServices;
  /** The clipboard backend; default chosen from `env` on first use. */
  reader?: ClipboardReader;
  /** Largest image accepted (default 64 MiB, the transfer cap). */
  maxBytes?: number;
  /** How long to wait for the capsule's answer after the last byte was sent. */
  responseTimeoutMs?: number;
  /** Opens a new connection to the same capsule; without it, files are not staged (images still are). */
  connect?: () => Promise<Transport>;
  /** The host's record of host actions (one line per staged or refused file). */
  record?: (line: string) => void;
}

export type { PasteMode } from './image-sender.ts';

/** Where a paste came from; decides what happens when there is no image. */
export type PasteTrigger =
  /** The paste key: no image → its raw bytes go to the program, silently. */
  | { kind: 'key'; raw: Buffer }
  /** An empty bracketed paste (Cmd+V over an image-only clipboard): no image → the empty paste and a notice. */
  | { kind: 'empty-paste' }
  /** A bracketed paste that is one absolute path: not a readable image → the paste goes through as is. */
  | { kind: 'pasted-path'; content: Buffer; path: string }
  /** A palette action or an upstream capsule's request: no image → a notice. */
  | { kind: 'action'; source: 'clipboard' | 'clipboard-path' }
  /** The terminal told of a paste with an image on its clipboard (paste events, mode 5522): read it with `pw`. */
  | { kind: 'terminal-paste'; pw: string | null };

export type PasteOutcome =
  | ImageSendOutcome
  | { kind: 'files' }
  | { kind: 'passed-through' }
  | { kind: 'no-image' }
  | { kind: 'failed'; code: ErrorCode; message: string };

export { imageFrames } from './image-frames.ts';

const DEFAULT_RESPONSE_TIMEOUT_MS = 30_000;
/** A pasted path that fails with one of these is ordinary text (no file, not a file, not an image). */
const NOT_AN_IMAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'E_PATH_NOT_FOUND',
  'E_NOT_A_FILE',
  'E_UNSUPPORTED_IMAGE',
  'E_NO_CLIPBOARD_IMAGE',
  'E_PATH_UNREADABLE',
]);
/** Text types a terminal paste event is read as, best first. */
const TEXT_TYPES = ['text/plain;charset=utf-8', 'text/plain'];
const PASTE_START = Buffer.from('\x1b[200~');
const PASTE_END = Buffer.from('\x1b[201~');

/** `JACKIN_PASTE_IMAGE_PATHS`: on unless an off-word (env-switch.ts). */
export function pasteImagePathsEnabled(env: NodeJS.ProcessEnv): boolean {
  return envSwitch(env, 'JACKIN_PASTE_IMAGE_PATHS');
}

/** `JACKIN_PASTE_FILE_PATHS`: on unless an off-word (env-switch.ts). */
export function pasteFilePathsEnabled(env: NodeJS.ProcessEnv): boolean {
  return envSwitch(env, 'JACKIN_PASTE_FILE_PATHS');
}

/** What a paste found: an image to send, host files to stage, or nothing. */
type Found =
  | { kind: 'image'; image: { format: ImageFormat; bytes: Buffer } }
  | { kind: 'files'; paths: readonly string[] }
  /** Text the terminal gave through OSC 52 (no 5522 there): pasted as the terminal would have. */
  | { kind: 'text'; text: string }
  | null;

export class PasteFeature implements Disposable {
  readonly #s: PasteSession;
  readonly #store = new DisposableStore();
  readonly #env: NodeJS.ProcessEnv;
  readonly #maxBytes: number;
  readonly #connect: (() => Promise<Transport>) | undefined;
  readonly #record: ((line: string) => void) | undefined;
  readonly #images: ImageSender;
  #reader: ClipboardReader | undefined;
  readonly #services: HostServices | undefined;
  /** Pastes run one at a time, in trigger order. */
  #queue: Promise<unknown> = Promise.resolve();
  #missingTold = false;

  constructor(session: PasteSession, opts: PasteFeatureOptions = {}) {
    this.#s = session;
    this.#env = opts.env ?? opts.services?.env ?? process.env;
    this.#reader = opts.reader;
    this.#services = opts.services;
    if (opts.reader !== undefined) this.#tapTerminal(opts.reader);
    this.#maxBytes = opts.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
    this.#connect = opts.connect;
    this.#record = opts.record;
    const store = this.#store;
    this.#images = store.add(new ImageSender(session, opts.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS));
    store.add(session.onFrame((f) => this.#onFrame(f)));
    let welcomed = false;
    store.add(
      session.onWelcome(() => {
        if (welcomed) return;
        welcomed = true;
        this.#startPasteEvents();
      }),
    );
    store.add(session.addInputHook('pasteKey', (ev) => this.onPasteKey(ev)));
    store.add(session.addInputHook('paste', (ev) => this.onPaste(ev)));
    const action = (id: string, title: string, key: string, trigger: PasteTrigger, mode: PasteMode) =>
      store.add(session.registerAction({ id, title, key, run: () => void this.trigger(trigger, mode) }));
    action('paste-image', 'Paste image from host clipboard', 'v', { kind: 'action', source: 'clipboard' }, 'paste');
    action('stage-image', 'Stage image without pasting', 's', { kind: 'action', source: 'clipboard' }, 'stage-only');
    action('stage-image-path', 'Stage image from clipboard path', 'p', { kind: 'action', source: 'clipboard-path' }, 'stage-only');
  }

  /** Removes the affordance's hooks, actions and listeners. */
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
    return this.#enqueue(() => this.#run(trigger, mode));
  }

  #enqueue<T>(job: () => Promise<T>): Promise<T> {
    const hold = this.#s.holdInput();
    const run = this.#queue.then(job);
    this.#queue = run.catch(() => undefined);
    return run.finally(() => hold.dispose());
  }

  /** The hook for paste-key events (the key and an empty bracketed paste). */
  onPasteKey(ev: InputEvent): boolean {
    if (ev.type !== 'paste-key') return false;
    void this.trigger(ev.source === 'empty-paste' ? { kind: 'empty-paste' } : { kind: 'key', raw: ev.raw }, 'paste');
    return true;
  }

  /**
   * The hook for bracketed pastes: claims a paste of host paths only (with files staged, any number of
   * existing files; else exactly one path, for an image). Anything else goes on to the program.
   */
  onPaste(ev: InputEvent): boolean {
    if (ev.type !== 'paste') return false;
    if (this.#stagesFiles()) {
      const parsed = parsePastedPaths(ev.content);
      if (parsed === null) return false;
      void this.#enqueue(() => this.#pastedPaths(parsed, ev.content));
      return true;
    }
    if (!pasteImagePathsEnabled(this.#env)) return false;
    const path = parsePastedPath(ev.content);
    if (path === null) return false;
    void this.trigger({ kind: 'pasted-path', content: ev.content, path }, 'paste');
    return true;
  }

  /** Files are staged: the session can open connections, the capsule stages files, the operator allows it. */
  #stagesFiles(): boolean {
    return this.#connect !== undefined && hasFeature(this.#s.features, 'file-stage') && pasteFilePathsEnabled(this.#env);
  }

  /**
   * A pasted or copied path whose symlinks lead elsewhere (host-file.ts) is read only once the operator
   * confirmed the file it leads to: the container may have made the name, in a directory it shares.
   */
  readonly #confirmRedirect = (given: string, real: string): Promise<boolean> => this.#s.confirm({ kind: 'stage', target: real, label: given });

  #reader_(): ClipboardReader {
    if (this.#reader === undefined) {
      const reader = this.#services?.clipboardReader ?? selectClipboardReader(this.#env);
      this.#reader = reader;
      this.#tapTerminal(reader);
    }
    return this.#reader;
  }

  /** The terminal's clipboard answers on the input: its reader sees every read first (terminal-reader.ts). */
  #tapTerminal(reader: ClipboardReader): void {
    if (!(reader instanceof TerminalClipboardReader)) return;
    this.#store.add(this.#s.addInputTap({ take: (chunk) => reader.take(chunk), reply: (body) => reader.reply(body), attach: (feed) => reader.attach(feed) }));
    reader.onPasteEvent = (ev) => this.#pasteEvent(ev);
    let told = false;
    reader.onMalformed = (why) => {
      // Once a session: a terminal that keeps sending such packets must not bury the screen in notices.
      if (told) return;
      told = true;
      this.#s.notify('warning', `Dropped ${why} from your terminal (E_TERMINAL_CLIPBOARD_MALFORMED); nothing of it was pasted`);
    };
    this.#store.add({ dispose: () => ((reader.onPasteEvent = null), (reader.onMalformed = null)) });
  }

  /**
   * With the terminal as the clipboard: once the capsule welcomed the session (the terminal is raw, its answer
   * cannot echo), asks whether it speaks OSC 5522 and, if so, turns paste events on for the session (the
   * terminal's restore turns them off). Never delays the start: the question runs beside the session.
   */
  #startPasteEvents(): void {
    let reader: ClipboardReader;
    try {
      reader = this.#reader_();
    } catch {
      return; // a bad JACKIN_CLIPBOARD is told at the first paste
    }
    if (!(reader instanceof TerminalClipboardReader)) return;
    void reader.supported().then((yes) => {
      if (!yes || this.#store.isDisposed) return;
      this.#s.setHostNeeds({ pasteEvents: true });
      this.#store.add({ dispose: () => this.#s.setHostNeeds({ pasteEvents: false }) });
    });
  }

  /**
   * The terminal told of a paste (its own paste key, with paste events on): an image is read and pasted as
   * Ctrl+V pastes one; text is read and pasted as the terminal would have (pasted paths included); else a notice.
   */
  #pasteEvent(ev: PasteEvent): void {
    if (ev.offered.includes('image/png')) {
      void this.trigger({ kind: 'terminal-paste', pw: ev.pw }, 'paste');
      return;
    }
    const text = TEXT_TYPES.find((t) => ev.offered.includes(t));
    if (text === undefined) {
      this.#s.notify('warning', "Nothing pasted: your terminal's clipboard holds neither a PNG image nor text");
      return;
    }
    void this.#enqueue(async () => {
      const reader = this.#reader_();
      if (!(reader instanceof TerminalClipboardReader)) return;
      let bytes: Buffer | null;
      try {
        bytes = await reader.read(text, ev.pw);
      } catch (e) {
        this.#s.notify('error', `Text not pasted: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      if (bytes === null || bytes.length === 0) return;
      this.#pasteText(bytes);
    });
  }

  /** Text from the terminal's clipboard, pasted as the terminal's own paste would be (pasted paths staged). */
  #pasteText(bytes: Buffer): void {
    // Bracket markers inside the text would end the paste early: the rest would reach the program as typed.
    const content = Buffer.from(bytes.toString('latin1').replaceAll('\x1b[200~', '').replaceAll('\x1b[201~', ''), 'latin1');
    const paste: InputEvent = { type: 'paste', content, raw: Buffer.concat([PASTE_START, content, PASTE_END]) };
    if (!this.onPaste(paste)) this.#typePaste(content);
  }

  /** Types `text` into the program as a paste: in bracketed-paste markers when the program asked for them. */
  #typePaste(text: Buffer): void {
    const bytes = this.#s.programModes.bracketedPaste ? Buffer.concat([PASTE_START, text, PASTE_END]) : text;
    if (bytes.length > 0) this.#s.sendInput(bytes);
  }

  async #run(trigger: PasteTrigger, mode: PasteMode): Promise<PasteOutcome> {
    let found: Found;
    try {
      found = await this.#acquire(trigger);
    } catch (e) {
      return this.#acquireFailed(trigger, e);
    }
    if (found === null) return this.#nothingFound(trigger);
    if (found.kind === 'files') {
      await this.#copiedFiles(found.paths);
      return { kind: 'files' };
    }
    if (found.kind === 'text') {
      this.#pasteText(Buffer.from(found.text, 'utf8'));
      return { kind: 'passed-through' };
    }
    return this.#images.send(found.image, mode);
  }

  #nothingFound(trigger: PasteTrigger): PasteOutcome {
    switch (trigger.kind) {
      case 'key':
        this.#s.sendInput(trigger.raw);
        return { kind: 'passed-through' };
      case 'empty-paste':
        this.#typePaste(Buffer.alloc(0));
        this.#s.notify('warning', 'Image not pasted: no image on the host clipboard');
        this.#logFailed(trigger, 'no image on the host clipboard');
        return { kind: 'no-image' };
      case 'pasted-path':
        this.#typePaste(trigger.content);
        return { kind: 'passed-through' };
      case 'terminal-paste':
        this.#s.notify('warning', "Image not pasted: your terminal's clipboard no longer holds it");
        this.#logFailed(trigger, 'no image on the terminal clipboard');
        return { kind: 'no-image' };
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

  /** What the trigger's source holds: the clipboard is read once, the pasted path's file read once. */
  async #acquire(trigger: PasteTrigger): Promise<Found> {
    const image = (i: { format: ImageFormat; bytes: Buffer } | null): Found => (i === null ? null : { kind: 'image', image: i });
    switch (trigger.kind) {
      case 'pasted-path':
        try {
          return image(await readImageFile(trigger.path, this.#maxBytes, this.#confirmRedirect));
        } catch (e) {
          // Not a readable image (missing, a directory, text): the paste is ordinary text.
          if (e instanceof JackinError && NOT_AN_IMAGE_CODES.has(e.code)) return null;
          throw e;
        }
      case 'action':
        if (trigger.source === 'clipboard-path') {
          const path = await this.#reader_().readPath();
          return path === null ? null : image(await readImageFile(path, this.#maxBytes, this.#confirmRedirect));
        }
        return image(await contentImage(await this.#reader_().readImage(), this.#reader_().name, this.#maxBytes, this.#confirmRedirect));
      case 'terminal-paste': {
        const reader = this.#reader_();
        if (!(reader instanceof TerminalClipboardReader)) return null;
        const bytes = await reader.read('image/png', trigger.pw);
        const got: ClipboardContent | null = bytes === null ? null : { kind: 'image', bytes, mimeType: 'image/png', offered: ['image/png'] };
        return image(await contentImage(got, reader.name, this.#maxBytes));
      }
      case 'key':
      case 'empty-paste': {
        const reader = this.#reader_();
        let got: ClipboardContent | null;
        try {
          got = await reader.readImage();
        } catch (e) {
          // A terminal that cannot send images may still give its clipboard's text (OSC 52): the paste key then
          // pastes that text, as the terminal's own paste would; otherwise the notice says what would send images.
          if (trigger.kind === 'key' && reader instanceof TerminalClipboardReader && hasCode(e, 'E_TERMINAL_NO_IMAGES')) {
            const text = await reader.readText();
            if (text !== null) return { kind: 'text', text };
          }
          throw e;
        }
        if (got?.kind === 'file' && this.#stagesFiles()) {
          // A copied file list is staged, unless it is one image file (then it goes as an image).
          const paths = got.paths ?? [got.path];
          if (!(paths.length === 1 && (await hasImageSignature(paths[0]!)))) return { kind: 'files', paths };
        }
        return image(await contentImage(got, reader.name, this.#maxBytes, this.#confirmRedirect));
      }
      default: {
        const never: never = trigger;
        throw new TypeError(`unexpected trigger ${JSON.stringify(never)}`);
      }
    }
  }

  #acquireFailed(trigger: PasteTrigger, e: unknown): PasteOutcome {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    const message = e instanceof Error ? e.message : String(e);
    // The terminal as clipboard that cannot send images is no clipboard either, for the paste key.
    const missing = code === 'E_CLIPBOARD_BACKEND_MISSING' || code === 'E_BAD_CLIPBOARD_BACKEND' || code === 'E_TERMINAL_NO_IMAGES';
    if (trigger.kind === 'pasted-path') {
      // A real image we cannot send (too large): the text still goes through, and the operator learns why.
      this.#typePaste(trigger.content);
      this.#s.notify('warning', `Pasted path not staged: ${message}`);
      this.#logFailed(trigger, `${code}: ${message}`, code);
      return { kind: 'failed', code, message };
    }
    if (trigger.kind === 'key' && missing) {
      // No clipboard tool here (an SSH session): the key keeps its meaning for the program; said once.
      this.#s.sendInput(trigger.raw);
      if (this.#missingTold) return { kind: 'failed', code, message };
      this.#missingTold = true;
    }
    this.#s.notify('error', `Image not pasted: ${message}`);
    this.#logFailed(trigger, `${code}: ${message}`, code);
    return { kind: 'failed', code, message };
  }

  /** A paste the operator asked for that ended before anything was sent: in the host's record too. */
  #logFailed(trigger: PasteTrigger, detail: string, code?: ErrorCode): void {
    const target = trigger.kind === 'pasted-path' ? trigger.path : trigger.kind === 'action' ? trigger.source : 'clipboard';
    this.#s.logAction({ action: 'paste-image', target, result: code !== undefined && isRefusal(code) ? 'refused' : 'failed', detail });
  }

  #stage(paths: readonly string[]): Promise<string[] | null> {
    return stagePaths(this.#s, paths, { connect: this.#connect!, env: this.#env, ...(this.#record !== undefined ? { record: this.#record } : {}) });
  }

  /** A bracketed paste of host paths, files staged: one image file is an image; other files are staged. */
  async #pastedPaths(parsed: PastedPaths, content: Buffer): Promise<void> {
    const only = parsed.words.length === 1 ? parsed.words[0]! : undefined;
    if (only !== undefined && pasteImagePathsEnabled(this.#env) && (await hasImageSignature(only.path))) {
      await this.#run({ kind: 'pasted-path', content, path: only.path }, 'paste');
      return;
    }
    const staged = await this.#stage(parsed.words.map((w) => w.path));
    this.#typePaste(staged === null ? content : Buffer.from(rewritePaste(parsed, staged), 'utf8'));
  }

  /** The paste key over copied files (not one image): the container paths are typed, as one paste. */
  async #copiedFiles(paths: readonly string[]): Promise<void> {
    const staged = await this.#stage(paths);
    if (staged === null) {
      this.#s.notify('warning', 'Copied files not pasted: a copied file no longer exists');
      return;
    }
    this.#typePaste(Buffer.from(staged.map((p) => renderPath(p, 'plain')).join(' '), 'utf8'));
  }

  #onFrame(f: ServerFrame): void {
    switch (f.type) {
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

/**
 * Installs the paste affordance on a session (before `start()`): its hooks, palette actions and capsule
 * requests; with `connect`, host files are staged too.
 */
export function installPasteFeature(session: PasteSession, opts: PasteFeatureOptions = {}): PasteFeature {
  return new PasteFeature(session, opts);
}
