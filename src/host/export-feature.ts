/**
 * Exports inside an attached session: the palette actions (Export file…, Export file under cursor, their
 * "and reveal" / "and open" variants, Pull offered file), the export a modifier-click starts (called by the
 * links feature, which owns the mouse hook), and the gate for an upstream capsule's FileExport* frames.
 *
 * Our capsule never sends FileExport* frames on the attach connection: every export it serves travels on a
 * fresh control-channel connection the host opened for an operator request (export-client.ts). So on the
 * attach connection such frames are refused outright when the capsule negotiated extensions, and accepted
 * from an upstream capsule (whose palette runs inside the container) only within a short window after an
 * operator gesture (gesture-gate.ts), once per gesture. A refused export writes nothing.
 */
import { basename, dirname } from 'node:path';
import { JackinError } from '../errors.ts';
import { hasFeature, type ServerFrame } from '../protocol/index.ts';
import type { Transport } from '../transport/transport.ts';
import { DisposableStore, toDisposable, type Disposable } from '../disposable.ts';
import type { FeatureSession } from './feature-session.ts';
import { exportDirectory } from './download-dir.ts';
import { controlCall, exportFile, type ExportedFile } from './export-client.ts';
import { createExportSink, type ExportSink } from './export-sink.ts';
import { createGestureGate, DEFAULT_GESTURE_WINDOW_MS, type GestureGate } from './gesture-gate.ts';
import { createOpener, type Opener } from './opener.ts';
import { requestResolve } from './resolver.ts';
import { formatBytes } from '../ui/format-bytes.ts';

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
  readonly opener?: Opener;
  /** The path token under the program's cursor, or null; default a Resolve{target:'path', at:null} round trip. */
  readonly resolvePathAtCursor?: (session: FeatureSession) => Promise<string | null>;
  readonly gestureWindowMs?: number;
}

export interface ExportFeature extends Disposable {
  /** Exports one container path; tells the operator the outcome. Resolves undefined on failure. */
  exportPath(path: string, mode: ExportMode): Promise<ExportedFile | undefined>;
  /** For the links feature: a modifier-click on a visible path (records the gesture, then exports it). */
  exportFromClick(path: string): void;
}

function describe(e: unknown): string {
  return e instanceof JackinError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e);
}

export function installExportFeature(session: FeatureSession, opts: ExportFeatureOptions): ExportFeature {
  const store = new DisposableStore();
  const env = opts.env ?? process.env;
  let opener = opts.opener;
  const getOpener = (): Opener => (opener ??= createOpener({ env }));
  const destination = (): Promise<string> => (opts.directory !== undefined ? Promise.resolve(opts.directory) : exportDirectory(opts.instance, undefined, env));
  // Exports in flight end (and remove their temporary files) when the session or the feature ends.
  const stop = new AbortController();
  void session.done.then(() => stop.abort());
  store.add(toDisposable(() => stop.abort()));

  async function reveal(path: string, mode: ExportMode): Promise<void> {
    if (mode === 'save') return;
    try {
      await getOpener().openFile(path, mode);
    } catch (e) {
      session.notify('error', `Could not ${mode} ${path}: ${describe(e)}`);
    }
  }

  async function exportPath(path: string, mode: ExportMode): Promise<ExportedFile | undefined> {
    const trimmed = path.trim();
    if (trimmed === '') {
      session.notify('warning', 'Export: no path given');
      return undefined;
    }
    try {
      const directory = await destination();
      session.notify('info', `Exporting ${trimmed}…`);
      const r = await exportFile({ path: trimmed, reveal: mode === 'reveal', open: mode === 'open' }, { connect: opts.connect, directory, signal: stop.signal });
      session.notify('success', `Saved ${basename(r.destination)} (${formatBytes(r.bytes)}) in ${dirname(r.destination)}`);
      await reveal(r.destination, mode);
      return r;
    } catch (e) {
      session.notify('error', `Export of ${trimmed} failed: ${describe(e)}`);
      return undefined;
    }
  }

  const resolvePathAtCursor =
    opts.resolvePathAtCursor ??
    (async (): Promise<string | null> => {
      const r = await requestResolve(session, 'path', null);
      return r.kind === 'none' ? null : r.text;
    });

  async function underCursor(mode: ExportMode): Promise<void> {
    if (!hasFeature(session.features, 'resolve')) {
      session.notify('warning', 'Export file under cursor needs a jackin capsule (this one does not resolve paths)');
      return;
    }
    let path: string | null;
    try {
      path = await resolvePathAtCursor(session);
    } catch (e) {
      session.notify('error', `Export file under cursor: ${describe(e)}`);
      return;
    }
    if (path === null || path.trim() === '') {
      session.notify('warning', 'No file path under the cursor');
      return;
    }
    await exportPath(path, mode);
  }

  async function pullOffered(): Promise<void> {
    let reply: Record<string, unknown>;
    try {
      reply = await controlCall(opts.connect, { method: 'offers' });
    } catch (e) {
      session.notify('error', `Pull offered file: ${describe(e)}`);
      return;
    }
    const file = reply['file'];
    if (typeof file !== 'string' || file === '') {
      session.notify('info', 'No file is offered (inside the container: jackin-capsule offer <path>)');
      return;
    }
    await exportPath(file, 'save');
  }

  const variants: ReadonlyArray<{ mode: ExportMode; suffix: string; idSuffix: string }> = [
    { mode: 'save', suffix: '', idSuffix: '' },
    { mode: 'reveal', suffix: ' and reveal', idSuffix: '-reveal' },
    { mode: 'open', suffix: ' and open', idSuffix: '-open' },
  ];
  for (const v of variants) {
    store.add(session.registerAction({
      id: `export-file${v.idSuffix}`,
      title: `Export file…${v.suffix}`,
      ...(v.mode === 'save' ? { key: 'e' } : {}),
      prompt: 'Container path to export',
      run: (argument) => void exportPath(argument ?? '', v.mode),
    }));
  }
  for (const v of variants) {
    store.add(session.registerAction({
      id: `export-cursor${v.idSuffix}`,
      title: `Export file under cursor${v.suffix}`,
      ...(v.mode === 'save' ? { key: 'x' } : {}),
      run: () => underCursor(v.mode),
    }));
  }
  store.add(session.registerAction({ id: 'pull-offered-file', title: 'Pull offered file', key: 'f', run: () => pullOffered() }));

  installUpstreamGate(session, store, { destination, reveal, window: opts.gestureWindowMs ?? DEFAULT_GESTURE_WINDOW_MS, signal: stop.signal });

  return {
    exportPath,
    exportFromClick(path) {
      session.gesture('click');
      void exportPath(path, 'save');
    },
    dispose: () => store.dispose(),
  };
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

/** Accepts an upstream capsule's FileExport* frames only right after an operator gesture. */
function installUpstreamGate(
  session: FeatureSession,
  store: DisposableStore,
  o: { destination: () => Promise<string>; reveal: (path: string, mode: ExportMode) => Promise<void>; window: number; signal: AbortSignal },
): void {
  const gate: GestureGate<'export'> = createGestureGate();
  store.add(session.onGesture(() => gate.gesture('export')));
  const transfers = new Map<bigint, UpstreamTransfer>();
  const refusedIds = new Set<bigint>();
  const refuse = (id: bigint, why: string): void => {
    if (refusedIds.has(id)) return;
    if (refusedIds.size > 64) refusedIds.clear();
    refusedIds.add(id);
    session.notify('warning', `Refused a file export from the capsule: ${why}; nothing was written`);
  };
  const fail = (id: bigint, t: UpstreamTransfer, e: unknown): void => {
    if (t.failed) return;
    t.failed = true;
    transfers.delete(id);
    void t.sink?.abort(describe(e));
    session.notify('error', `Export of ${t.name} failed: ${describe(e)}`);
  };
  o.signal.addEventListener('abort', () => {
    for (const t of transfers.values()) void t.sink?.abort('the session ended');
    transfers.clear();
  });

  store.add(session.onFrame((f: ServerFrame) => {
    switch (f.type) {
      case 'FileExportStart': {
        if (session.features !== null) return refuse(f.exportId, 'this capsule sends exports only on request, never on the session');
        if (transfers.has(f.exportId)) return refuse(f.exportId, `export ${f.exportId} started twice`);
        if (transfers.size >= MAX_UPSTREAM_EXPORTS) return refuse(f.exportId, `already ${MAX_UPSTREAM_EXPORTS} exports in progress`);
        if (!gate.consume('export', o.window)) return refuse(f.exportId, 'it did not follow a palette key or a click of yours');
        const mode: ExportMode = f.open ? 'open' : f.reveal ? 'reveal' : 'save';
        const t: UpstreamTransfer = { sink: undefined, name: f.name, mode, chain: Promise.resolve(), failed: false };
        transfers.set(f.exportId, t);
        t.chain = o.destination().then(async (directory) => {
          t.sink = createExportSink({ directory });
          await t.sink.begin(f.name, f.size);
        });
        t.chain.catch((e: unknown) => fail(f.exportId, t, e));
        return;
      }
      case 'FileExportChunk': {
        const t = transfers.get(f.exportId);
        if (t === undefined) return refuse(f.exportId, `data for export ${f.exportId}, which was never accepted`);
        t.chain = t.chain.then(() => t.sink?.write(f.offset, f.bytes));
        t.chain.catch((e: unknown) => fail(f.exportId, t, e));
        return;
      }
      case 'FileExportEnd': {
        const t = transfers.get(f.exportId);
        if (t === undefined) return refuse(f.exportId, `the end of export ${f.exportId}, which was never accepted`);
        t.chain = t.chain.then(async () => {
          if (t.sink === undefined) throw new JackinError('E_EXPORT_STATE', 'export ended before it began');
          const r = await t.sink.finish(f.sha256);
          transfers.delete(f.exportId);
          session.notify('success', `Saved ${basename(r.destination)} (${formatBytes(r.bytes)}) in ${dirname(r.destination)}`);
          await o.reveal(r.destination, t.mode);
        });
        t.chain.catch((e: unknown) => fail(f.exportId, t, e));
        return;
      }
      default:
        return;
    }
  }));
}
