/**
 * Opening links on the host (issue 7), wired into an attach session:
 * - mouse capture: once our capsule speaks (its first Modes frame), the feature asks the host for click
 *   capture (`?1000h?1006h`); the host's terminal filter composes that with the program's own mouse modes,
 *   which it reads from the output itself (docs/terminal-policy.md). While the program tracks the mouse,
 *   every report goes to it unchanged.
 * - Ctrl+click / Alt+click (SGR modifier bits) on a cell: the link there (OSC 8 target, else the URL
 *   token), checked by checkUrl and opened; no link there → the file path there goes to the export
 *   feature. Any other report we captured is swallowed: the program never asked for mouse input.
 * - palette: **Open link under cursor** (l) and **Open offered link** (u, its entry shows the link, and
 *   "(forwards port N)" when opening it would bind a login callback port: the session's URL-open hooks say so).
 * - the capsule resolves what is under a click or the cursor, and its screen model is untrusted: every such
 *   link opens only after the operator confirmed the exact target in the host's prompt (session.confirm).
 * - the offered link: read when the palette opens; until the answer comes the entry is pending and cannot
 *   be chosen. Choosing it opens the exact link the entry drew (held by the host), after asking the capsule
 *   once more: an offer that changed meanwhile is refused with a notice. A link the entry could not show
 *   whole is confirmed in the prompt first.
 * - an upstream capsule's HostOpenUrl: refused unless the operator allowed upstream requests, then
 *   honoured once per gesture (the session's one gate), and checked again.
 * - a link the opener failed to open (no browser, no display: over SSH) is kept, and its notice says how to
 *   copy it instead: palette, **Copy link not opened** (k), which writes it with the session's text writer.
 *   Nothing is copied before the operator chooses it.
 * Every outcome is a host notice and a line in the host's action log. Notices name scheme and host only;
 * nothing here logs a query string or fragment.
 */
import type { ServerFrame } from '../../protocol/index.ts';
import { envSwitch } from '../../policy/env-switch.ts';
import { checkUrl, redactUrlForLog, type UrlCheckOk } from '../../policy/url-safety.ts';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import type { SessionFrames, SessionInput, SessionNotices, SessionPalette, SessionRequests, SessionTerminal } from '../session/feature-session.ts';
import { openUrlChecked, type UrlOrigin } from '../session/open-url.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { createHostServices, type HostServices } from '../platform/host-services.ts';
import type { Opener } from '../platform/opener.ts';
import type { ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import type { PaletteOpening, ShownTarget } from '../session/feature-session.ts';
import { requestResolve, type ResolveResult } from '../session/resolver.ts';
import { inertText } from '../../ui/inert-text.ts';

/** False with --no-mouse or when JACKIN_MOUSE is an off-word (env-switch.ts). */
export function mouseCaptureEnabled(env: Readonly<Record<string, string | undefined>>, noMouseFlag = false): boolean {
  return !noMouseFlag && envSwitch(env, 'JACKIN_MOUSE');
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
  /** The session's platform services (default: the feature's own, from `env`). */
  services?: HostServices;
  /** Where Copy link not opened writes (default: the services' text writer). */
  writer?: ClipboardTextWriter;
  opener?: Opener;
  /** Operator-configured extra URL schemes. */
  extraSchemes?: readonly string[];
  resolveTimeoutMs?: number;
}

/** What the links feature uses of the session. */
export type LinkSession = SessionFrames & SessionNotices & SessionPalette & SessionRequests & SessionInput & SessionTerminal;

const OFFERED_TITLE = 'Open offered link';
const COPY_FAILED_TITLE = 'Copy link not opened';
const COPY_FAILED_KEY = 'k';

/** The links affordance of one attached session; installLinkFeature() makes it. */
export class LinkFeature implements Disposable {
  readonly #session: LinkSession;
  readonly #options: LinkFeatureOptions;
  readonly #store = new DisposableStore();
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #extra: { extraSchemes: readonly string[] } | Record<string, never>;
  readonly #services: HostServices;
  readonly #opener: Opener;
  readonly #captureWanted: boolean;
  /** Click capture was asked of the host's terminal (our capsule, capture not turned off). */
  #captureRequested = false;
  /** Why the entry named no link in this opening (null: nothing was offered). */
  #unread: string | null = null;
  /** The last link the opener failed to open (checked by the host), for Copy link not opened. */
  #notOpened: UrlCheckOk | null = null;
  #writer: ClipboardTextWriter | undefined;

  constructor(session: LinkSession, options: LinkFeatureOptions = {}) {
    this.#session = session;
    this.#options = options;
    const env = options.env ?? options.services?.env ?? process.env;
    this.#env = env;
    const extra = options.extraSchemes === undefined ? {} : { extraSchemes: options.extraSchemes };
    this.#extra = extra;
    this.#services = options.services ?? createHostServices({ env: env as NodeJS.ProcessEnv, ...extra });
    this.#opener = options.opener ?? this.#services.opener;
    this.#captureWanted = mouseCaptureEnabled(env, options.noMouse === true);
    const store = this.#store;
    store.add(session.onFrame((f) => this.#onFrame(f)));
    store.add(session.onPaletteOpen((opening) => void this.#showOffer(opening)));
    store.add(session.addInputHook('mouse', (ev) => this.#onMouse(ev)));
    store.add(session.registerAction({ id: 'open-link-under-cursor', title: 'Open link under cursor', key: 'l', run: () => this.openLinkAt(null) }));
    store.add(session.registerAction({ id: 'copy-link-not-opened', title: COPY_FAILED_TITLE, key: COPY_FAILED_KEY, run: () => this.copyLinkNotOpened() }));
    store.add(
      session.registerAction({
        id: 'open-offered-link',
        title: OFFERED_TITLE,
        key: 'u',
        readsTarget: {
          pendingTitle: `${OFFERED_TITLE} (reading the offer…)`,
          whilePending: () => {
            session.logAction({
              action: 'open-url',
              target: 'the offered link (not yet shown)',
              result: 'refused',
              detail: 'chosen while the palette was still reading the offer',
            });
            return 'Still reading the offer; choose it once it shows';
          },
        },
        run: (_argument, shown) => this.openOfferedLink(shown ?? { target: null, seen: false }),
      }),
    );
  }

  /** True while the operator's terminal reports the mouse because of us. */
  get capturing(): boolean {
    // The terminal reports clicks for us: capture asked, and the program does not track the mouse itself.
    return this.#captureRequested && this.#session.programModes.mouse === 0;
  }

  /** Opens the link at a viewport cell (0-based), or under the program's cursor when null. */
  async openLinkAt(at: { row: number; col: number } | null): Promise<void> {
    const session = this.#session;
    const options = this.#options;
    const r = await this.#resolve('link', at);
    if (r.kind !== 'none') {
      await this.#openUrl(r.text, r.kind === 'osc8' ? 'osc8' : 'text', true);
      return;
    }
    if (at === null) {
      session.notify('info', 'No link under the cursor');
      return;
    }
    const p = options.exportFeature === undefined ? null : await this.#resolve('path', at);
    if (p !== null && p.kind !== 'none' && options.exportFeature !== undefined) {
      options.exportFeature.exportFromClick(p.text);
      return;
    }
    session.notify('info', 'No link or file path under the pointer');
  }

  /** Opens the offered link its palette entry showed (`shown`), if the capsule still offers that one. */
  async openOfferedLink(shown: ShownTarget): Promise<void> {
    const session = this.#session;
    const drawn = shown.target;
    if (drawn === null) {
      if (this.#unread !== null) session.notify('error', `Open offered link: ${this.#unread}`);
      else session.notify('info', 'No link has been offered (inside the session: jackin-capsule open-url <url>)');
      return;
    }
    // The capsule may have changed its offer since the entry was drawn (it sees the operator's timing): the
    // link opened is the one drawn, and only while it is still the one offered.
    let now: string | null;
    try {
      const r = await this.#resolve('offered-link', null);
      const checked = r.kind === 'none' ? null : checkUrl(r.text, this.#extra);
      now = checked === null ? null : checked.ok ? checked.href : r.text;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.notify('error', `Open offered link: ${message}`);
      session.logAction({ action: 'open-url', target: redactUrlForLog(drawn), result: 'failed', detail: message });
      return;
    }
    if (now !== drawn) {
      const instead = now === null ? 'no link is offered now' : `now ${redactUrlForLog(now)}`;
      session.notify(
        'warning',
        `Not opened: the offered link changed after the palette showed it (${inertText(instead, 120)}); open the palette again to see it`,
      );
      session.logAction({
        action: 'open-url',
        target: redactUrlForLog(drawn),
        result: 'refused',
        detail: `the offer changed after the palette showed it: ${instead}`,
      });
      return;
    }
    // The entry showed this exact link whole: choosing it was the confirmation. A cut one is confirmed first.
    await this.#openUrl(drawn, 'offer', !shown.seen);
  }

  /**
   * Copies the last link that failed to open to the host clipboard. Only on this choice of the operator's:
   * the failure's notice says how, and copies nothing. The link is the one the host checked (and the
   * operator confirmed, when the capsule chose it), never re-read from the capsule.
   */
  async copyLinkNotOpened(): Promise<void> {
    const session = this.#session;
    const link = this.#notOpened;
    if (link === null) {
      session.notify('info', 'No link failed to open in this session');
      return;
    }
    const target = redactUrlForLog(link.href);
    try {
      const writer = (this.#writer ??= this.#options.writer ?? this.#services.textWriter);
      await writer.write(link.href);
      session.notify('success', `Copied ${link.display} to the clipboard (${writer.name})`);
      session.logAction({ action: 'copy-link', target, result: 'ok', detail: 'a link that did not open' });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.notify('error', `Could not copy the link: ${message}`);
      session.logAction({ action: 'copy-link', target, result: 'failed', detail: message });
    }
  }

  /** Keeps a link the opener failed to open, for Copy link not opened; says how, for the failure's notice. */
  readonly keepFailed = (checked: UrlCheckOk): string => {
    this.#notOpened = checked;
    this.#session.retitleAction('copy-link-not-opened', `${COPY_FAILED_TITLE}: ${inertText(checked.display, 200)}`);
    return `copy it with the palette: ${COPY_FAILED_TITLE} (${COPY_FAILED_KEY})`;
  };

  dispose(): void {
    if (this.#captureRequested) this.#session.setHostNeeds({ mouseCapture: false });
    this.#store.dispose();
  }

  #resolve(target: 'link' | 'path' | 'offered-link', at: { row: number; col: number } | null): Promise<ResolveResult> {
    return requestResolve(this.#session, target, at, this.#options.resolveTimeoutMs);
  }

  /** Checks and opens one URL (session/open-url.ts); `confirm`: the capsule chose it, the operator confirms first. */
  #openUrl(raw: string, origin: UrlOrigin, confirm = false): Promise<void> {
    return openUrlChecked(this.#session, { env: this.#env, opener: this.#opener, ...this.#extra, keepFailed: this.keepFailed }, raw, origin, confirm);
  }

  #failed(what: string): (e: unknown) => void {
    return (e: unknown): void => {
      this.#session.notify('error', `${what}: ${e instanceof Error ? e.message : String(e)}`);
    };
  }

  async #showOffer(opening: PaletteOpening): Promise<void> {
    const session = this.#session;
    let href: string | null = null;
    let why: string | null = null;
    try {
      const r = await this.#resolve('offered-link', null);
      const checked = r.kind === 'none' ? null : checkUrl(r.text, this.#extra);
      if (checked?.ok === true) href = checked.href;
      else if (checked !== null) why = `the offered link is refused: ${checked.reason}`;
    } catch (e) {
      why = e instanceof Error ? e.message : String(e);
    }
    if (!opening.current) return;
    this.#unread = why;
    if (href === null) {
      session.showTarget('open-offered-link', opening, {
        title: why === null ? OFFERED_TITLE : `${OFFERED_TITLE} (could not read the offer)`,
        target: null,
        literal: false,
      });
      return;
    }
    // What opening it would do besides (a login forward binds its port) is said in the entry itself.
    const extras = session.urlOpenSteps(href).flatMap((st) => (st.entry === undefined ? [] : [st.entry]));
    const title = `${OFFERED_TITLE}: ${inertText(href, 400)}`;
    session.showTarget('open-offered-link', opening, {
      title,
      ...(extras.length > 0 ? { suffix: ` (${extras.join(', ')})` } : {}),
      target: href,
      literal: inertText(href, 400) === href,
    });
  }

  #onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'Modes':
        // Only our capsule sends Modes: its clicks are resolved on our gestures, so ask for click capture.
        // The frame's content is the container's word; the host's own filter knows the program's modes,
        // and composes the terminal's mouse modes from them and this need (docs/terminal-policy.md).
        if (this.#captureWanted && !this.#captureRequested) {
          this.#captureRequested = true;
          this.#session.setHostNeeds({ mouseCapture: true });
        }
        return;
      case 'HostOpenUrl':
        this.#onHostOpenUrl(f.url);
        return;
      default:
        return;
    }
  }

  #onHostOpenUrl(url: string): void {
    const session = this.#session;
    // Our own capsule never asks: its links are resolved on our gestures. Only an upstream capsule, whose
    // palette runs in the container, answers a gesture with HostOpenUrl.
    if (session.features !== null) {
      session.notify('warning', `Ignored a request from the capsule to open ${redactUrlForLog(url)}: jackin capsules never open links by themselves`);
      session.logAction({ action: 'open-url', target: redactUrlForLog(url), result: 'refused', detail: 'a jackin capsule never asks to open links' });
      return;
    }
    if (!session.admitUpstream('open', 'open-url', redactUrlForLog(url))) return;
    void this.#openUrl(url, 'capsule').catch(this.#failed('Open link'));
  }

  #onMouse(ev: InputEvent): boolean {
    const session = this.#session;
    if (ev.type !== 'mouse') return false;
    const modifiedClick = ev.button === 0 && ev.press && !ev.motion && (ev.ctrl || ev.alt);
    if (session.features === null) {
      // Upstream capsule: it handles its own clicks; we only note the gesture for its HostOpenUrl.
      if (modifiedClick) session.gesture('click');
      return false;
    }
    // The program asked for the mouse (or we never captured it): its reports, unchanged.
    if (!this.capturing) return false;
    if (modifiedClick) {
      session.gesture('click');
      void this.openLinkAt({ row: ev.y - 1, col: ev.x - 1 }).catch(this.#failed('Open link'));
    }
    // Everything else we captured (plain clicks, releases, wheel) was reported only because of us.
    return true;
  }
}

export function installLinkFeature(session: LinkSession, options: LinkFeatureOptions = {}): LinkFeature {
  return new LinkFeature(session, options);
}
