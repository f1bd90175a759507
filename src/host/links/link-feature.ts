/**
 * Opening links on the host (issue 7), wired into an attach session:
 * - mouse capture: once our capsule speaks (its first Modes frame), the feature asks the host for click
 *   capture (`?1000h?1006h`); the host's terminal filter composes that with the program's own mouse modes,
 *   which it reads from the output itself (docs/terminal-policy.md). While the program tracks the mouse,
 *   every report goes to it unchanged.
 * - Ctrl+click / Alt+click (SGR modifier bits) on a cell: the link there (OSC 8 target, else the URL
 *   token), checked by checkUrl and opened; no link there → the file path there goes to the export
 *   feature. Any other report we captured is swallowed: the program never asked for mouse input.
 * - palette: **Open link under cursor** (l) and **Open offered link** (u, its entry shows the link).
 * - the capsule resolves what is under a click or the cursor, and its screen model is untrusted: every such
 *   link (and the offered link, when it is not the one its palette entry showed) opens only after the
 *   operator confirmed the exact target in the host's prompt (session.confirm).
 * - an upstream capsule's HostOpenUrl: refused unless the operator allowed upstream requests, then
 *   honoured once per gesture (the session's one gate), and checked again.
 * Every outcome is a host notice and a line in the host's action log. Notices name scheme and host only;
 * nothing here logs a query string or fragment.
 */
import type { ServerFrame } from '../../protocol/index.ts';
import { checkUrl, redactUrlForLog } from '../../policy/url-safety.ts';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import { openUrlChecked, type UrlOrigin } from '../session/open-url.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { createOpener, type Opener } from '../platform/opener.ts';
import { PALETTE_MAX_TITLE_COLUMNS } from '../session/palette.ts';
import { requestResolve, type ResolveResult } from '../session/resolver.ts';
import { textWidth } from '../../ui/inert-text.ts';


/** Values of JACKIN_MOUSE that turn mouse capture off (any case). */
const MOUSE_OFF_VALUES = new Set(['off', 'no', '0', 'false', 'none']);

export function mouseCaptureEnabled(env: Readonly<Record<string, string | undefined>>, noMouseFlag = false): boolean {
  if (noMouseFlag) return false;
  const v = env['JACKIN_MOUSE'];
  return v === undefined || !MOUSE_OFF_VALUES.has(v.trim().toLowerCase());
}

/** What a modifier-click on a file path (no link under it) is handed to. */
export interface PathClickHandler {
  exportFromClick(path: string): void;
}

export interface LinkFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** `--no-mouse`: no mouse capture (modifier-clicks do nothing; the palette still works). */
  noMouse?: boolean;
  /** Where a click on a file path goes (the export feature's exportFromClick): links do not know export. */
  exportFeature?: PathClickHandler;
  opener?: Opener;
  /** Operator-configured extra URL schemes. */
  extraSchemes?: readonly string[];
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
  const captureWanted = mouseCaptureEnabled(env, options.noMouse === true);
  /** Click capture was asked of the host's terminal (our capsule, capture not turned off). */
  let captureRequested = false;
  /** The terminal reports clicks for us: capture asked, and the program does not track the mouse itself. */
  const capturing = (): boolean => captureRequested && session.programModes.mouse === 0;

  const resolve = (target: 'link' | 'path' | 'offered-link', at: { row: number; col: number } | null): Promise<ResolveResult> =>
    requestResolve(session, target, at, options.resolveTimeoutMs);

  /** Checks and opens one URL (session/open-url.ts); `confirm`: the capsule chose it, the operator confirms first. */
  const openUrl = (raw: string, origin: UrlOrigin, confirm = false): Promise<void> => openUrlChecked(session, { env, opener, ...extra }, raw, origin, confirm);

  const failed = (what: string) => (e: unknown): void => {
    session.notify('error', `${what}: ${e instanceof Error ? e.message : String(e)}`);
  };

  const openLinkAt = async (at: { row: number; col: number } | null): Promise<void> => {
    const r = await resolve('link', at);
    if (r.kind !== 'none') {
      await openUrl(r.text, r.kind === 'osc8' ? 'osc8' : 'text', true);
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

  /** The offered link the palette entry shows, so choosing the entry is choosing that exact target. */
  let shownOffer: string | null = null;
  const OFFERED_TITLE = 'Open offered link';
  const showOffer = async (): Promise<void> => {
    let href: string | null = null;
    try {
      const r = await resolve('offered-link', null);
      const checked = r.kind === 'none' ? null : checkUrl(r.text, extra);
      href = checked?.ok === true ? checked.href : null;
    } catch {
      href = null;
    }
    const title = href === null ? OFFERED_TITLE : `${OFFERED_TITLE}: ${href}`;
    // Only a target shown whole in the entry counts as seen; a longer one is confirmed in the prompt.
    shownOffer = textWidth(title) <= PALETTE_MAX_TITLE_COLUMNS ? href : null;
    session.retitleAction('open-offered-link', title);
  };

  const openOfferedLink = async (): Promise<void> => {
    const r = await resolve('offered-link', null);
    if (r.kind === 'none') {
      session.notify('info', 'No link has been offered (inside the session: jackin-capsule open-url <url>)');
      return;
    }
    // The entry showed this exact link: choosing it was the confirmation. Anything else is confirmed first.
    const checked = checkUrl(r.text, extra);
    await openUrl(r.text, 'offer', !(checked.ok && checked.href === shownOffer));
  };

  store.add(
    session.onFrame((f: ServerFrame) => {
      switch (f.type) {
        case 'Modes':
          // Only our capsule sends Modes: its clicks are resolved on our gestures, so ask for click capture.
          // The frame's content is the container's word; the host's own filter knows the program's modes,
          // and composes the terminal's mouse modes from them and this need (docs/terminal-policy.md).
          if (captureWanted && !captureRequested) {
            captureRequested = true;
            session.setHostNeeds({ mouseCapture: true });
          }
          return;
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
      session.logAction({ action: 'open-url', target: redactUrlForLog(url), result: 'refused', detail: 'a jackin capsule never asks to open links' });
      return;
    }
    if (!session.admitUpstream('open', 'open-url', redactUrlForLog(url))) return;
    void openUrl(url, 'capsule').catch(failed('Open link'));
  };

  store.add(
    session.onPaletteOpen(() => {
      if (session.features !== null) void showOffer();
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
    if (!capturing()) return false;
    if (modifiedClick) {
      session.gesture('click');
      void openLinkAt({ row: ev.y - 1, col: ev.x - 1 }).catch(failed('Open link'));
    }
    // Everything else we captured (plain clicks, releases, wheel) was reported only because of us.
    return true;
  };
  store.add(session.addInputHook('mouse', onMouse));
  store.add(session.registerAction({ id: 'open-link-under-cursor', title: 'Open link under cursor', key: 'l', run: () => openLinkAt(null) }));
  store.add(session.registerAction({ id: 'open-offered-link', title: OFFERED_TITLE, key: 'u', run: () => openOfferedLink() }));

  return {
    openLinkAt,
    openOfferedLink,
    get capturing() {
      return capturing();
    },
    dispose: () => {
      if (captureRequested) session.setHostNeeds({ mouseCapture: false });
      store.dispose();
    },
  };
}

