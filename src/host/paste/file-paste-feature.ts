/**
 * Files in, by paste or drop: a bracketed paste that is nothing but absolute paths of existing files (what
 * terminals type when files are dropped on them), or Ctrl+V over a file manager's copied file list, stages
 * each file in the capsule (`<run>/files/<random>/<name>`, through stage-client.ts on a fresh connection)
 * and gives the program the container paths in place of the host paths, quoted as they were, inside the
 * same paste, never followed by Enter.
 *
 * Images keep their own path: a paste of one image file, or a clipboard image, goes to the paste feature
 * exactly as before. Nothing happens by accident: a paste with any word that is not an existing path is
 * forwarded unchanged; a secret location, a directory or a file over JACKIN_STAGE_MAX_BYTES stays as the
 * host path with a notice saying why; a path whose symlinks lead elsewhere (host-file.ts) is staged only once
 * the operator confirmed the file it leads to; JACKIN_PASTE_FILE_PATHS=off turns all of it off. Every staged file
 * gets a notice and a line in the host's record. Typed keys wait (holdInput) until the paste is typed.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { describeError, isRefusal, JackinError } from '../../errors.ts';
import { hasFeature } from '../../protocol/index.ts';
import { signatureFormat } from '../../policy/image-signature.ts';
import { stageMaxBytes } from '../../policy/stage-limits.ts';
import type { Transport } from '../../transport/transport.ts';
import { formatBytes } from '../../ui/format-bytes.ts';
import { createPrimedReader, type PrimedReader } from '../platform/clipboard/primed-reader.ts';
import { selectClipboardReader } from '../platform/clipboard/select.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import { symlinkDeclined } from '../platform/host-file.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { installPasteFeature, pasteImagePathsEnabled, type PasteFeature } from './paste-feature.ts';
import { parsePastedPaths, renderPath, rewritePaste, type PastedPaths } from '../platform/pasted-paths.ts';
import { stageFile } from './stage-client.ts';
import { closeSources, openStageSources } from './stage-source.ts';

const PASTE_START = Buffer.from('\x1b[200~');
const PASTE_END = Buffer.from('\x1b[201~');

/** What the feature uses of AttachSession. */
export type FilePasteSession = Pick<FeatureSession, 'features' | 'onFrame' | 'addInputHook' | 'holdInput' | 'notify' | 'sendInput' | 'logAction' | 'confirm'>;

export interface FilePasteOptions {
  /** Opens a new connection to the same capsule. */
  readonly connect: () => Promise<Transport>;
  /** The image paste feature, which keeps images (its hooks are asked after ours). */
  readonly images: Pick<PasteFeature, 'trigger'>;
  /** The clipboard reader shared with the image feature. */
  readonly clipboard: PrimedReader;
  readonly env?: NodeJS.ProcessEnv;
  /** The host's record of host actions (one line per staged or refused file). */
  readonly record?: (line: string) => void;
}

/** `JACKIN_PASTE_FILE_PATHS`: on unless 0/false/no/off (any case). */
export function pasteFilePathsEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env['JACKIN_PASTE_FILE_PATHS']?.trim().toLowerCase();
  return !(v === '0' || v === 'false' || v === 'no' || v === 'off');
}

/** True when the file at `path` starts with an accepted image signature (the image feature then takes it). */
async function looksLikeImage(path: string): Promise<boolean> {
  try {
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      if (!(await fh.stat()).isFile()) return false;
      const head = Buffer.alloc(64);
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      return signatureFormat(head.subarray(0, bytesRead)) !== null;
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

export class FilePasteFeature implements Disposable {
  readonly #s: FilePasteSession;
  readonly #o: FilePasteOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #store = new DisposableStore();
  #bracketed = false;

  /** Install after the image feature: the newest hook is asked first, and ours let what they leave through. */
  constructor(session: FilePasteSession, o: FilePasteOptions) {
    this.#s = session;
    this.#o = o;
    this.#env = o.env ?? process.env;
    this.#store.add(
      session.onFrame((f) => {
        if (f.type === 'Modes') this.#bracketed = f.bracketedPaste;
      }),
    );
    this.#store.add(session.addInputHook('paste', (ev) => this.onPaste(ev)));
    this.#store.add(session.addInputHook('pasteKey', (ev) => this.onPasteKey(ev)));
  }

  dispose(): void {
    this.#store.dispose();
  }

  #active(): boolean {
    return hasFeature(this.#s.features, 'file-stage') && pasteFilePathsEnabled(this.#env);
  }

  /** The paste hook: claims a paste of paths only; anything else goes on to the image feature (or the program). */
  onPaste(ev: InputEvent): boolean {
    if (ev.type !== 'paste' || !this.#active()) return false;
    const parsed = parsePastedPaths(ev.content);
    if (parsed === null) return false;
    const hold = this.#s.holdInput();
    void this.#pastedPaths(parsed, ev.raw).finally(() => hold.dispose());
    return true;
  }

  /** The paste-key hook: a copied file list is staged; an image (or nothing) goes to the image feature. */
  onPasteKey(ev: InputEvent): boolean {
    if (ev.type !== 'paste-key' || !this.#active()) return false;
    const hold = this.#s.holdInput();
    void this.#pasteKey(ev).finally(() => hold.dispose());
    return true;
  }

  async #pastedPaths(parsed: PastedPaths, raw: Buffer): Promise<void> {
    const only = parsed.words.length === 1 ? parsed.words[0]! : undefined;
    if (only !== undefined && pasteImagePathsEnabled(this.#env) && (await looksLikeImage(only.path))) {
      await this.#o.images.trigger({ kind: 'pasted-path', raw, path: only.path }, 'paste');
      return;
    }
    const staged = await this.#stage(parsed.words.map((w) => w.path));
    if (staged === null) {
      this.#s.sendInput(raw);
      return;
    }
    const text = Buffer.from(rewritePaste(parsed, staged), 'utf8');
    const framed = raw.subarray(0, PASTE_START.length).equals(PASTE_START);
    this.#s.sendInput(framed ? Buffer.concat([PASTE_START, text, PASTE_END]) : text);
  }

  async #pasteKey(ev: Extract<InputEvent, { type: 'paste-key' }>): Promise<void> {
    const trigger = ev.source === 'empty-paste' ? ({ kind: 'empty-paste', raw: ev.raw } as const) : ({ kind: 'key', raw: ev.raw } as const);
    let files: readonly string[] | null = null;
    try {
      const got = await this.#o.clipboard.readFresh();
      files = got?.kind === 'file' ? (got.paths ?? [got.path]) : null;
      if (files !== null && files.length === 1 && (await looksLikeImage(files[0]!))) files = null;
      if (files === null) this.#o.clipboard.prime({ value: got });
    } catch (e) {
      this.#o.clipboard.prime({ error: e });
    }
    if (files === null) {
      await this.#o.images.trigger(trigger, 'paste');
      return;
    }
    const staged = await this.#stage(files);
    if (staged === null) {
      this.#s.notify('warning', 'Copied files not pasted: a copied file no longer exists');
      return;
    }
    const text = Buffer.from(staged.map((p) => renderPath(p, 'plain')).join(' '), 'utf8');
    this.#s.sendInput(this.#bracketed ? Buffer.concat([PASTE_START, text, PASTE_END]) : text);
  }

  /**
   * Stages every path that may be; returns, per path, the container path or the host path (refused, with a
   * notice), or null when a path is not an existing file at all (the paste is then text, left alone).
   */
  async #stage(paths: readonly string[]): Promise<string[] | null> {
    let cap: number;
    try {
      cap = stageMaxBytes(this.#env);
    } catch (e) {
      this.#s.notify('error', `Pasted files not staged: ${describeError(e)}`);
      return null;
    }
    const opened = await openStageSources(paths, cap);
    try {
      if (opened.some((o) => !o.ok && o.error.code === 'E_PATH_NOT_FOUND')) return null;
      const out: string[] = [];
      for (const o of opened) {
        if (!o.ok) {
          this.#refused(o.path, o.error);
          out.push(o.path);
          continue;
        }
        const src = o.source;
        try {
          // The name may be a symlink the container made in a shared directory: the operator confirms the
          // file it really leads to, or nothing of it is read.
          const real = src.resolved ?? src.path;
          if (src.redirected && !(await this.#s.confirm({ kind: 'stage', target: real, label: src.path }))) throw symlinkDeclined(src.path, real);
          const r = await stageFile(src, { connect: this.#o.connect, capsuleNotice: false });
          const via = r.resolved === null ? '' : ` (symlink to ${r.resolved})`;
          this.#s.notify('success', `Staged ${r.source}${via} as ${r.destination} (${formatBytes(r.bytes)})`);
          this.#o.record?.(`staged ${r.source}${via} -> ${r.destination} (${r.bytes} bytes, sha256 ${r.sha256})`);
          this.#s.logAction({ action: 'stage', target: r.source, result: 'ok', detail: `${r.destination} (${r.bytes} bytes)${via}` });
          out.push(r.destination);
        } catch (e) {
          this.#refused(src.path, e);
          out.push(src.path);
        }
      }
      return out;
    } finally {
      await closeSources(opened);
    }
  }

  #refused(path: string, e: unknown): void {
    const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
    const refused = isRefusal(code);
    this.#s.notify(refused ? 'warning' : 'error', `Not staged, pasted as the host path: ${describeError(e)}`);
    this.#o.record?.(`not staged ${path}: ${code}: ${describeError(e)}`);
    this.#s.logAction({ action: 'stage', target: path, result: refused ? 'refused' : 'failed', detail: `${code}: ${describeError(e)}` });
  }
}

/**
 * Installs both paste features on an attach session: images (paste-feature.ts) and, when the session can
 * open connections of its own, files. They share one clipboard reader, so one Ctrl+V reads it once.
 */
export function installPasteFeatures(
  session: FeatureSession,
  o: { connect?: () => Promise<Transport>; env?: NodeJS.ProcessEnv; record?: (line: string) => void },
): Disposable {
  const env = o.env ?? process.env;
  const clipboard = createPrimedReader(() => selectClipboardReader(env));
  const store = new DisposableStore();
  const images = store.add(installPasteFeature(session, { env, reader: clipboard }));
  if (o.connect !== undefined) {
    store.add(new FilePasteFeature(session, { connect: o.connect, images, clipboard, env, ...(o.record !== undefined ? { record: o.record } : {}) }));
  }
  return store;
}
