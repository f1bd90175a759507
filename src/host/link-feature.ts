/**
 * Opening links on the host (issue 7), wired into an attach session:
 * - mouse capture: the operator's terminal reports the mouse (`?1000h?1006h`) only while the program has
 *   no mouse tracking of its own (from the capsule's Modes frames) and capture is not turned off; when
 *   the program tracks the mouse, every report goes to it unchanged.
 * - Ctrl+click / Alt+click (SGR modifier bits) on a cell: the link there (OSC 8 target, else the URL
 *   token), checked by checkUrl and opened; no link there → the file path there goes to the export
 *   feature. Any other report we captured is swallowed: the program never asked for mouse input.
 * - palette: **Open link under cursor** (l) and **Open offered link** (u).
 * - an upstream capsule's HostOpenUrl: honoured only shortly after an operator gesture the host saw
 *   itself, at most one per gesture, and checked again.
 * Notices name scheme and host only; nothing here logs a query string or fragment.
 */
import { hasCode } from '../errors.ts';
import type { ProgramModes, ServerFrame } from '../protocol/index.ts';
import { checkUrl, linksEnabled, redactUrlForLog, type UrlCheckOk } from '../policy/url-safety.ts';
import { DisposableStore, type Disposable } from '../disposable.ts';
import type { ExportFeature } from './export-feature.ts';
import type { FeatureSession } from './feature-session.ts';
import { createGestureGate, type GestureGate } from './gesture-gate.ts';
import type { InputEvent } from './input-scan.ts';
import { createOpener, type Opener } from './opener.ts';
import { requestResolve, type ResolveResult } from './resolver.ts';

/** Normal tracking (press and release) with SGR encoding: enough for a click, no motion flood. */
export const MOUSE_CAPTURE_ON = '\x1b[?1000h\x1b[?1006h';
const SGR_OFF = '\x1b[?1006l';
const MOUSE_CAPTURE_OFF = '\x1b[?1000l\x1b[?1006l';

/** Values of JACKIN_MOUSE that turn mouse capture off (any case). */
const MOUSE_OFF_VALUES = new Set(['off', 'no', '0', 'false', 'none']);

export function mouseCaptureEnabled(env: Readonly<Record<string, string | undefined>>, noMouseFlag = false): boolean {
  if (noMouseFlag) return false;
  const v = env['JACKIN_MOUSE'];
  return v === undefined || !MOUSE_OFF_VALUES.has(v.trim().toLowerCase());
}

export interface LinkFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** `--no-mouse`: no mouse capture (modifier-clicks do nothing; the palette still works). */
  noMouse?: boolean;
  /** The export feature, for clicks on a file path. */
  exportFeature?: Pick<ExportFeature, 'exportFromClick'>;
  opener?: Opener;
  /** Operator-configured extra URL schemes. */
  extraSchemes?: readonly string[];
  gate?: GestureGate<'open'>;
  resolveTimeoutMs?: number;
}

export interface LinkFeature extends Disposable {
  /** Opens the link at a viewport cell (0-based), or under the program's cursor when null. */
  openLinkAt(at: { row: number; col: number } | null): Promise<void>;
  openOfferedLink(): Promise<void>;
  /** True while the operator's terminal reports the mouse because of us. */
  readonly capturing: boolean;
}

export function installLinkFeature(session: FeatureSession, options: LinkFeatureOptions = {}): LinkFeature {
  const store = new DisposableStore();
  const env = options.env ?? process.env;
  const extra = options.extraSchemes === undefined ? {} : { extraSchemes: options.extraSchemes };
  const opener = options.opener ?? createOpener({ env, ...extra });
  const gate = options.gate ?? createGestureGate<'open'>();
  const captureWanted = mouseCaptureEnabled(env, options.noMouse === true);
  let programModes: ProgramModes | null = null;
  let capturing = false;

  const resolve = (target: 'link' | 'path' | 'offered-link', at: { row: number; col: number } | null): Promise<ResolveResult> =>
    requestResolve(session, target, at, options.resolveTimeoutMs);

  /** Checks and opens one URL; every outcome is a notice. */
  const openUrl = async (raw: string, origin: 'osc8' | 'text' | 'offer' | 'capsule'): Promise<void> => {
    if (!linksEnabled(env)) {
      session.notify('warning', 'Link not opened: opening links is turned off (JACKIN_OPEN_LINKS); unset it to allow links');
      return;
    }
    const checked = checkUrl(raw, extra);
    if (!checked.ok) {
      session.notify('error', `Link refused: ${checked.reason}`);
      return;
    }
    await launch(checked, origin);
  };

  const launch = async (checked: UrlCheckOk, origin: 'osc8' | 'text' | 'offer' | 'capsule'): Promise<void> => {
    // A hyperlink's label can differ from its target: the notice always names where it really went.
    const what = origin === 'osc8' ? ' (hyperlink target)' : origin === 'offer' ? ' (offered link)' : '';
    try {
      await opener.openUrl(checked);
      session.notify('success', `Opened ${checked.display}${what}`);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.notify('error', hasCode(e, 'E_RATE_LIMITED') ? `Link not opened: ${message}` : `Could not open ${checked.display}: ${message}`);
    }
  };

  const failed = (what: string) => (e: unknown): void => {
    session.notify('error', `${what}: ${e instanceof Error ? e.message : String(e)}`);
  };

  const openLinkAt = async (at: { row: number; col: number } | null): Promise<void> => {
    const r = await resolve('link', at);
    if (r.kind !== 'none') {
      await openUrl(r.text, r.kind === 'osc8' ? 'osc8' : 'text');
      return;
    }
    if (at === null) {
      session.notify('info', 'No link under the cursor');
      return;
    }
    const p = options.exportFeature === undefined ? null : await resolve('path', at);
    if (p !== null && p.kind !== 'none' && options.exportFeature !== undefined) {
      options.exportFeature.exportFromClick(p.text);
      return;
    }
    session.notify('info', 'No link or file path under the pointer');
  };

  const openOfferedLink = async (): Promise<void> => {
    const r = await resolve('offered-link', null);
    if (r.kind === 'none') {
      session.notify('info', 'No link has been offered (inside the session: jackin-capsule open-url <url>)');
      return;
    }
    await openUrl(r.text, 'offer');
  };

  const applyCapture = (modes: ProgramModes): void => {
    programModes = modes;
    if (!captureWanted) return;
    if (!modes.mouseTracking) {
      // Also after every repaint: the capsule's repaint resets the terminal's mouse modes.
      session.writeTerminal(Buffer.from(MOUSE_CAPTURE_ON, 'latin1'));
      capturing = true;
    } else if (capturing) {
      // The program's own ?1000h..?1003h went through; our SGR encoding must not outlive our capture.
      if (!modes.sgrMouse) session.writeTerminal(Buffer.from(SGR_OFF, 'latin1'));
      capturing = false;
    }
  };

  store.add(
    session.onFrame((f: ServerFrame) => {
      switch (f.type) {
        case 'Modes': {
          const { type: _type, ...modes } = f;
          applyCapture(modes);
          return;
        }
        case 'HostOpenUrl':
          onHostOpenUrl(f.url);
          return;
        default:
          return;
      }
    }),
  );

  const onHostOpenUrl = (url: string): void => {
    // Our own capsule never asks: its links are resolved on our gestures. Only an upstream capsule, whose
    // palette runs in the container, answers a gesture with HostOpenUrl.
    if (session.features !== null) {
      session.notify('warning', `Ignored a request from the capsule to open ${redactUrlForLog(url)}: jackin capsules never open links by themselves`);
      return;
    }
    if (!gate.consume('open')) {
      session.notify('warning', `Ignored a request from the capsule to open ${redactUrlForLog(url)}: no click or palette key of yours just before it`);
      return;
    }
    void openUrl(url, 'capsule').catch(failed('Open link'));
  };

  store.add(
    session.onGesture((g) => {
      if (g === 'palette-key' || g === 'click') gate.gesture('open');
    }),
  );

  const onMouse = (ev: InputEvent): boolean => {
    if (ev.type !== 'mouse') return false;
    const modifiedClick = ev.button === 0 && ev.press && !ev.motion && (ev.ctrl || ev.alt);
    if (session.features === null) {
      // Upstream capsule: it handles its own clicks; we only note the gesture for its HostOpenUrl.
      if (modifiedClick) session.gesture('click');
      return false;
    }
    // The program asked for the mouse (or we never captured it): its reports, unchanged.
    if (!capturing || programModes === null || programModes.mouseTracking) return false;
    if (modifiedClick) {
      session.gesture('click');
      void openLinkAt({ row: ev.y - 1, col: ev.x - 1 }).catch(failed('Open link'));
    }
    // Everything else we captured (plain clicks, releases, wheel) was reported only because of us.
    return true;
  };
  store.add(session.addInputHook('mouse', onMouse));
  store.add(session.registerAction({ id: 'open-link-under-cursor', title: 'Open link under cursor', key: 'l', run: () => openLinkAt(null) }));
  store.add(session.registerAction({ id: 'open-offered-link', title: 'Open offered link', key: 'u', run: () => openOfferedLink() }));

  return {
    openLinkAt,
    openOfferedLink,
    get capturing() {
      return capturing;
    },
    dispose: () => store.dispose(),
  };
}

/** The sequence that ends our capture (the terminal restore on exit also sends it). */
export { MOUSE_CAPTURE_OFF };
