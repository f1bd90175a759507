/**
 * Exports inside an attached session: the palette actions (Export file…, Export file under cursor, their
 * "and reveal" / "and open" variants, Pull offered file), the export a modifier-click starts (called by the
 * links feature, which owns the mouse hook), and the gate for an upstream capsule's FileExport* frames.
 *
 * Pull offered file acts on the exact path its palette entry drew: the offer is read when the palette
 * opens (the entry is pending, and cannot be chosen, until the answer comes); choosing the entry asks the
 * capsule once more and refuses, with a notice, an offer that changed meanwhile; a path the entry could not
 * show whole and as it is is confirmed in the host's prompt first.
 *
 * Our capsule never sends FileExport* frames on the attach connection: every export it serves travels on a
 * fresh control-channel connection the host opened for an operator request (export-client.ts). So on the
 * attach connection such frames are refused outright when the capsule negotiated extensions, and accepted
 * from an upstream capsule (whose palette runs inside the container) only within a short window after an
 * operator gesture (gesture-gate.ts), once per gesture. A refused export writes nothing.
 */
import { basename, dirname } from 'node:path';
import { JackinError, refusedOrFailed } from '../../errors.ts';
import { hasFeature, OFFERS_METHOD, type ServerFrame } from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import type { SessionFrames, SessionNotices, SessionPalette, SessionRequests } from '../session/feature-session.ts';
import { exportFile, type ExportedFile } from './export-client.ts';
import { controlCall } from '../../transport/control-call.ts';
import { ExportSink } from './export-sink.ts';
import { createHostServices, type HostServices } from '../platform/host-services.ts';
import type { Opener } from '../platform/opener.ts';
import type { PaletteOpening, ShownTarget } from '../session/feature-session.ts';
import { requestResolve } from '../session/resolver.ts';
import { inertText } from '../../ui/inert-text.ts';
import { exportNameFor } from '../platform/sanitize-name.ts';
import { formatBytes } from '../../ui/format-bytes.ts';

export type ExportMode = 'save' | 'reveal' | 'open';

/** Upstream transfers handled at once; more are refused (a person does not start more). */
export const MAX_UPSTREAM_EXPORTS = 4;

export interface ExportFeatureOptions {
  /** Instance name: the default destination is `<downloads>/jackin/<instance>/`. */
  readonly instance: string;
  /** Opens a new connection to the same capsule (socket, or the session's exec relay). */
  readonly connect: () => Promise<Transport>;
  /** Destination directory (default from JACKIN_DOWNLOAD_DIR / XDG / ~/Downloads). */
  readonly directory?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** The session's platform services (default: the feature's own, from `env`). */
  readonly services?: HostServices;
  readonly opener?: Opener;
  /** The path token under the program's cursor, or null; default a Resolve{target:'path', at:null} round trip. */
  readonly resolvePathAtCursor?: (session: ExportSession) => Promise<string | null>;
}

function describe(e: unknown): string {
  return e instanceof JackinError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e);
}

const OFFERED_TITLE = 'Pull offered file';

const VARIANTS: ReadonlyArray<{ mode: ExportMode; suffix: string; idSuffix: string }> = [
  { mode: 'save', suffix: '', idSuffix: '' },
  { mode: 'reveal', suffix: ' and reveal', idSuffix: '-reveal' },
  { mode: 'open', suffix: ' and open', idSuffix: '-open' },
];

/** What the export feature uses of the session. */
export type ExportSession = SessionFrames & SessionNotices & SessionPalette & SessionRequests;

/** The export affordance of one attached session; installExportFeature() makes it. */
export class ExportFeature implements Disposable {
  readonly #session: ExportSession;
  readonly #opts: ExportFeatureOptions;
  readonly #store = new DisposableStore();
  readonly #services: HostServices;
  // Exports in flight end (and remove their temporary files) when the feature ends (the session disposes it when it ends).
  readonly #stop = new AbortController();
  readonly #resolvePathAtCursor: (session: ExportSession) => Promise<string | null>;
  /** Why the Pull offered file entry named no file in this opening (null: nothing was offered). */
  #unread: string | null = null;

  constructor(session: ExportSession, opts: ExportFeatureOptions) {
    this.#session = session;
    this.#opts = opts;
    this.#services = opts.services ?? createHostServices({ env: opts.env ?? process.env });
    this.#resolvePathAtCursor =
      opts.resolvePathAtCursor ??
      (async (): Promise<string | null> => {
        const r = await requestResolve(session, 'path', null);
        return r.kind === 'none' ? null : r.text;
      });
    this.#store.add(toDisposable(() => this.#stop.abort()));
    this.#store.add(session.onPaletteOpen((opening) => this.#onPaletteOpen(opening)));
    this.#registerActions();
    this.#store.add(
      new UpstreamExportGate(session, {
        destination: () => this.#destination(),
        reveal: (path, mode) => this.#reveal(path, mode),
        signal: this.#stop.signal,
      }),
    );
  }

  /** Exports one container path; tells the operator the outcome. Resolves undefined on failure. */
  exportPath(path: string, mode: ExportMode): Promise<ExportedFile | undefined> {
    return this.#export(path, mode);
  }

  /** For the links feature: a modifier-click on a visible path (records the gesture, then exports it). */
  exportFromClick(path: string): void {
    this.#session.gesture('click');
    void this.#export(path, 'save', true);
  }

  dispose(): void {
    this.#store.dispose();
  }

  #getOpener(): Opener {
    return this.#opts.opener ?? this.#services.opener;
  }

  #destination(): Promise<string> {
    return this.#opts.directory !== undefined ? Promise.resolve(this.#opts.directory) : this.#services.exportDirectory(this.#opts.instance);
  }

  async #reveal(path: string, mode: ExportMode): Promise<void> {
    if (mode === 'save') return;
    const session = this.#session;
    try {
      const r = await this.#getOpener().openFile(path, mode);
      if (r.revealedInstead !== undefined) session.notify('warning', `Revealed ${basename(path)} instead of opening it: ${r.revealedInstead}`);
      else session.notify('success', `${mode === 'open' ? 'Opened' : 'Revealed'} ${basename(path)}`);
      session.logAction({
        action: r.revealedInstead === undefined ? `${mode}-file` : 'reveal-file',
        target: path,
        result: 'ok',
        ...(r.revealedInstead !== undefined ? { detail: `not opened: ${r.revealedInstead}` } : {}),
      });
    } catch (e) {
      session.notify('error', `Could not ${mode} ${path}: ${describe(e)}`);
      session.logAction({ action: `${mode}-file`, target: path, result: 'failed', detail: describe(e) });
    }
  }

  /**
   * Exports one container path. `confirm`: the capsule chose the path (a click, the cursor, a changed
   * offer), so the operator confirms it in the host's prompt first and nothing is fetched before.
   */
  async #export(path: string, mode: ExportMode, confirm = false): Promise<ExportedFile | undefined> {
    const session = this.#session;
    const trimmed = path.trim();
    if (trimmed === '') {
      session.notify('warning', 'Export: no path given');
      return undefined;
    }
    if (confirm && !(await session.confirm({ kind: 'export', target: trimmed, verb: mode === 'save' ? 'export' : `export and ${mode}` }))) {
      session.notify('info', `Not exported: ${trimmed}`);
      session.logAction({ action: 'export', target: trimmed, result: 'cancelled' });
      return undefined;
    }
    try {
      const directory = await this.#destination();
      session.notify('info', `Exporting ${trimmed}…`);
      const r = await exportFile(
        { path: trimmed, ...(mode === 'save' ? {} : { mode }) },
        { connect: this.#opts.connect, directory, signal: this.#stop.signal },
      );
      session.notify('success', `Saved ${basename(r.destination)} (${formatBytes(r.bytes)}) in ${dirname(r.destination)}`);
      session.logAction({ action: 'export', target: trimmed, result: 'ok', detail: r.destination });
      await this.#reveal(r.destination, mode);
      return r;
    } catch (e) {
      session.notify('error', `Export of ${trimmed} failed: ${describe(e)}`);
      session.logAction({ action: 'export', target: trimmed, result: refusedOrFailed(e), detail: describe(e) });
      return undefined;
    }
  }

  async #underCursor(mode: ExportMode): Promise<void> {
    const session = this.#session;
    if (!hasFeature(session.features, 'resolve')) {
      session.notify('warning', 'Export file under cursor needs a jackin capsule (this one does not resolve paths)');
      return;
    }
    let path: string | null;
    try {
      path = await this.#resolvePathAtCursor(session);
    } catch (e) {
      session.notify('error', `Export file under cursor: ${describe(e)}`);
      return;
    }
    if (path === null || path.trim() === '') {
      session.notify('warning', 'No file path under the cursor');
      return;
    }
    await this.#export(path, mode, true);
  }

  async #offeredFile(): Promise<string | null> {
    return (await controlCall(this.#opts.connect, OFFERS_METHOD, {})).file;
  }

  #onPaletteOpen(opening: PaletteOpening): void {
    const session = this.#session;
    if (session.features === null) {
      // An upstream capsule: offers are ours only, and its control channel is not asked.
      this.#unread = 'this capsule makes no offers (not a jackin capsule)';
      session.showTarget('pull-offered-file', opening, { title: OFFERED_TITLE, target: null, literal: false });
      return;
    }
    void this.#offeredFile().then(
      (offered) => {
        if (!opening.current) return;
        this.#unread = null;
        session.showTarget('pull-offered-file', opening, {
          title: offered === null ? OFFERED_TITLE : `${OFFERED_TITLE}: ${inertText(offered, 400)}`,
          target: offered,
          // Only a path drawn as it is (no character made visible) counts as seen; else the prompt shows it.
          literal: offered !== null && inertText(offered, 400) === offered,
        });
      },
      (e: unknown) => {
        if (!opening.current) return;
        this.#unread = describe(e);
        session.showTarget('pull-offered-file', opening, { title: `${OFFERED_TITLE} (could not read the offer)`, target: null, literal: false });
      },
    );
  }

  async #pullOffered(shown: ShownTarget): Promise<void> {
    const session = this.#session;
    const drawn = shown.target;
    if (drawn === null) {
      if (this.#unread !== null) session.notify('error', `Pull offered file: ${this.#unread}`);
      else session.notify('info', 'No file is offered (inside the container: jackin-capsule offer <path>)');
      return;
    }
    // The capsule may have changed its offer since the entry was drawn: the path pulled is the one drawn,
    // and only while it is still the one offered.
    let now: string | null;
    try {
      now = await this.#offeredFile();
    } catch (e) {
      session.notify('error', `Pull offered file: ${describe(e)}`);
      session.logAction({ action: 'export', target: drawn, result: 'failed', detail: describe(e) });
      return;
    }
    if (now !== drawn) {
      const instead = now === null ? 'no file is offered now' : `now ${now}`;
      session.notify(
        'warning',
        `Not pulled: the offered file changed after the palette showed it (${inertText(instead, 120)}); open the palette again to see it`,
      );
      session.logAction({ action: 'export', target: drawn, result: 'refused', detail: `the offer changed after the palette showed it: ${instead}` });
      return;
    }
    // The entry showed this exact path whole: choosing it was the confirmation. Anything else is confirmed first.
    await this.#export(drawn, 'save', !shown.seen);
  }

  #registerActions(): void {
    const session = this.#session;
    const store = this.#store;
    for (const v of VARIANTS) {
      store.add(
        session.registerAction({
          id: `export-file${v.idSuffix}`,
          title: `Export file…${v.suffix}`,
          ...(v.mode === 'save' ? { key: 'e' } : {}),
          prompt: 'Container path to export',
          run: (argument) => void this.#export(argument ?? '', v.mode),
        }),
      );
    }
    for (const v of VARIANTS) {
      store.add(
        session.registerAction({
          id: `export-cursor${v.idSuffix}`,
          title: `Export file under cursor${v.suffix}`,
          ...(v.mode === 'save' ? { key: 'x' } : {}),
          run: () => this.#underCursor(v.mode),
        }),
      );
    }
    store.add(
      session.registerAction({
        id: 'pull-offered-file',
        title: OFFERED_TITLE,
        key: 'f',
        readsTarget: {
          pendingTitle: `${OFFERED_TITLE} (reading the offer…)`,
          whilePending: () => {
            session.logAction({
              action: 'export',
              target: 'the offered file (not yet shown)',
              result: 'refused',
              detail: 'chosen while the palette was still reading the offer',
            });
            return 'Still reading the offer; choose it once it shows';
          },
        },
        run: (_argument, shown) => this.#pullOffered(shown ?? { target: null, seen: false }),
      }),
    );
  }
}

export function installExportFeature(session: ExportSession, opts: ExportFeatureOptions): ExportFeature {
  return new ExportFeature(session, opts);
}

interface UpstreamTransfer {
  /** Created once the destination directory is known. */
  sink: ExportSink | undefined;
  readonly name: string;
  readonly mode: ExportMode;
  /** Writes run in order; a failure is reported once. */
  chain: Promise<void>;
  failed: boolean;
}

interface UpstreamGateOptions {
  readonly destination: () => Promise<string>;
  readonly reveal: (path: string, mode: ExportMode) => Promise<void>;
  readonly signal: AbortSignal;
}

/**
 * Accepts an upstream capsule's FileExport* frames only when the operator allowed upstream requests, and
 * then once per gesture (session.admitUpstream); ours never sends them on the session.
 */
class UpstreamExportGate implements Disposable {
  readonly #session: ExportSession;
  readonly #o: UpstreamGateOptions;
  readonly #transfers = new Map<bigint, UpstreamTransfer>();
  readonly #refusedIds = new Set<bigint>();
  readonly #subscription: Disposable;

  constructor(session: ExportSession, o: UpstreamGateOptions) {
    this.#session = session;
    this.#o = o;
    o.signal.addEventListener('abort', () => {
      for (const t of this.#transfers.values()) void t.sink?.abort('the session ended');
      this.#transfers.clear();
    });
    this.#subscription = session.onFrame((f: ServerFrame) => this.#onFrame(f));
  }

  dispose(): void {
    this.#subscription.dispose();
  }

  /** Later frames of a refused export are dropped without another notice. */
  #silence(id: bigint): boolean {
    if (this.#refusedIds.has(id)) return false;
    if (this.#refusedIds.size > 64) this.#refusedIds.clear();
    this.#refusedIds.add(id);
    return true;
  }

  #refuse(id: bigint, why: string): void {
    if (!this.#silence(id)) return;
    this.#session.notify('warning', `Refused a file export from the capsule: ${why}; nothing was written`);
    this.#session.logAction({ action: 'export', target: `upstream export ${id}`, result: 'refused', detail: why });
  }

  #fail(id: bigint, t: UpstreamTransfer, e: unknown): void {
    if (t.failed) return;
    t.failed = true;
    this.#transfers.delete(id);
    void t.sink?.abort(describe(e));
    this.#session.notify('error', `Export of ${t.name} failed: ${describe(e)}`);
    this.#session.logAction({ action: 'export', target: t.name, result: refusedOrFailed(e), detail: describe(e) });
  }

  #onFrame(f: ServerFrame): void {
    const session = this.#session;
    const transfers = this.#transfers;
    switch (f.type) {
      case 'FileExportStart': {
        if (session.features !== null) return this.#refuse(f.exportId, 'this capsule sends exports only on request, never on the session');
        if (transfers.has(f.exportId)) return this.#refuse(f.exportId, `export ${f.exportId} started twice`);
        if (transfers.size >= MAX_UPSTREAM_EXPORTS) return this.#refuse(f.exportId, `already ${MAX_UPSTREAM_EXPORTS} exports in progress`);
        if (this.#refusedIds.has(f.exportId)) return;
        if (!session.admitUpstream('export', 'export', f.source)) return void this.#silence(f.exportId);
        const mode: ExportMode = f.open ? 'open' : f.reveal ? 'reveal' : 'save';
        // The published extension follows the path the transfer names, not a differing suggested name.
        const name = exportNameFor(f.source, /\.tar\.zst$/iu.test(f.name) ? 'directory' : 'file', f.name);
        const t: UpstreamTransfer = { sink: undefined, name, mode, chain: Promise.resolve(), failed: false };
        transfers.set(f.exportId, t);
        t.chain = this.#o.destination().then(async (directory) => {
          const sink = new ExportSink({ directory });
          t.sink = sink;
          await sink.begin(name, f.size);
        });
        t.chain.catch((e: unknown) => this.#fail(f.exportId, t, e));
        return;
      }
      case 'FileExportChunk': {
        const t = transfers.get(f.exportId);
        if (t === undefined) return this.#refuse(f.exportId, `data for export ${f.exportId}, which was never accepted`);
        t.chain = t.chain.then(() => t.sink?.write(f.offset, f.bytes));
        t.chain.catch((e: unknown) => this.#fail(f.exportId, t, e));
        return;
      }
      case 'FileExportEnd': {
        const t = transfers.get(f.exportId);
        if (t === undefined) return this.#refuse(f.exportId, `the end of export ${f.exportId}, which was never accepted`);
        t.chain = t.chain.then(async () => {
          if (t.sink === undefined) throw new JackinError('E_EXPORT_STATE', 'export ended before it began');
          const r = await t.sink.finish(f.sha256);
          transfers.delete(f.exportId);
          session.notify('success', `Saved ${basename(r.destination)} (${formatBytes(r.bytes)}) in ${dirname(r.destination)}`);
          session.logAction({ action: 'export', target: t.name, result: 'ok', detail: r.destination });
          await this.#o.reveal(r.destination, t.mode);
        });
        t.chain.catch((e: unknown) => this.#fail(f.exportId, t, e));
        return;
      }
      default:
        return;
    }
  }
}
