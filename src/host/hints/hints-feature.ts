/**
 * Link hints (issue 37), wired into an attach session: the palette's **Open link on screen** (o) and **Copy
 * link on screen** (y) ask our capsule for the links its screen model shows (extension `link-list`), check
 * every one again (hint-labels.ts: positions on the host's own screen, the URL check, one per cell, capped),
 * draw a label of one or two letters over each link's first cells, and take the keyboard: typing a label
 * chooses that link, Esc leaves. A letter typed in the first CONFIRM_ARM_MS after the labels appear chooses
 * nothing (it is dropped): the capsule picks when its list arrives, and could pick the moment the operator
 * types a word for the program, whose next letters would choose a label nobody saw. Either way the overlay
 * goes and the capsule repaints, so the screen is as before. This works whether or not the program tracks
 * the mouse: no click is involved. Keys typed after the label in the same read are the operator's next
 * keys: held while the chosen action asks, then typed into the program (never an answer to the prompt
 * drawn after them).
 *
 * The chosen target came from the capsule, which is untrusted, and a label can sit over other text (a lying
 * list; wide characters the operator's terminal draws narrower than the capsule counts them): opening goes
 * through the same checks and the same host prompt showing the exact target as a click (session/open-url.ts);
 * copying shows the same prompt, with the whole target, and only on Enter puts the checked target on the
 * host clipboard through the platform's text writer, with a notice and a log entry.
 */
import { performance } from 'node:perf_hooks';
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import { CONFIRM_ARM_MS } from '../session/confirm-controller.ts';
import { cutColumns } from '../../ui/inert-text.ts';
import { redactUrlForLog } from '../../policy/url-safety.ts';
import type { ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import { createHostServices, type HostServices } from '../platform/host-services.ts';
import type { Opener } from '../platform/opener.ts';
import type { SessionFrames, SessionInput, SessionNotices, SessionPalette, SessionRequests, SessionScreen } from '../session/feature-session.ts';
import type { ConfirmRequest } from '../session/confirm-prompt.ts';
import { openUrlChecked, type UrlOpening } from '../session/open-url.ts';
import { requestLinkList, RESOLVE_TIMEOUT_MS } from '../session/resolver.ts';
import { HostScreen } from '../terminal/host-screen.ts';
import { hasFeature, type ListedLink } from '../../protocol/index.ts';
import { decodeKeyEnds } from '../terminal/keys.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { buildHints, hintKey, renderHints, type Hint } from './hint-labels.ts';

export interface HintsFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** The session's platform services (default: the feature's own, from `env`). */
  services?: HostServices;
  opener?: Opener;
  /** The host clipboard's text writer (default: the platform's, chosen on first use). */
  writer?: ClipboardTextWriter;
  extraSchemes?: readonly string[];
  listTimeoutMs?: number;
  /** Diagnostics (--verbose). */
  log?: (line: string) => void;
  /** Keeps a link that failed to open to be copied instead (the links feature's Copy link not opened). */
  keepFailed?: UrlOpening['keepFailed'];
  /** Monotonic clock in milliseconds; injected by tests. */
  now?: () => number;
}

export type HintAction = 'open' | 'copy';

/** What the hints feature uses of the session. */
export type HintsSession = SessionFrames &
  SessionNotices &
  SessionPalette &
  Pick<SessionRequests, 'confirm' | 'urlOpenSteps'> &
  Pick<SessionInput, 'holdInput'> &
  SessionScreen;

/** The host's own text at a hint's cells, for the prompt ("the text on screen reads"). */
function shownLabel(hint: Hint): { label: string } | Record<string, never> {
  return hint.shown === undefined ? {} : { label: hint.shown };
}

/** What opening a URL needs of the session, bound to it (openUrlChecked takes it with its own `confirm`). */
function pickSession(session: HintsSession): Pick<HintsSession, 'notify' | 'logAction' | 'urlOpenSteps'> {
  return {
    notify: (level, text) => session.notify(level, text),
    logAction: (record) => session.logAction(record),
    urlOpenSteps: (href) => session.urlOpenSteps(href),
  };
}

/** The link hints affordance of one attached session; installHintsFeature() makes it. */
export class HintsFeature implements Disposable {
  readonly #session: HintsSession;
  readonly #options: HintsFeatureOptions;
  readonly #store = new DisposableStore();
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #extra: { extraSchemes: readonly string[] } | Record<string, never>;
  readonly #services: HostServices;
  readonly #opener: Opener;
  #writer: ClipboardTextWriter | undefined;
  readonly #now: () => number;
  /** The choices waiting for the operator: the feature's end ends them. */
  readonly #choosing = new Set<(chosen: null) => void>();

  constructor(session: HintsSession, options: HintsFeatureOptions = {}) {
    this.#session = session;
    this.#options = options;
    const env = options.env ?? options.services?.env ?? process.env;
    this.#env = env;
    const extra = options.extraSchemes === undefined ? {} : { extraSchemes: options.extraSchemes };
    this.#extra = extra;
    this.#services = options.services ?? createHostServices({ env: env as NodeJS.ProcessEnv, writeTerminal: (b) => session.writeTerminal(b), ...extra });
    this.#opener = options.opener ?? this.#services.opener;
    this.#writer = options.writer;
    this.#now = options.now ?? (() => performance.now());
    this.#store.add(
      toDisposable(() => {
        for (const finish of [...this.#choosing]) finish(null);
      }),
    );
    this.#store.add(session.registerAction({ id: 'open-link-on-screen', title: 'Open link on screen', key: 'o', run: () => this.showHints('open') }));
    this.#store.add(session.registerAction({ id: 'copy-link-on-screen', title: 'Copy link on screen', key: 'y', run: () => this.showHints('copy') }));
  }

  /** Lists the links on the screen and shows their labels; resolves once the operator chose one or left. */
  async showHints(action: HintAction): Promise<void> {
    const session = this.#session;
    const options = this.#options;
    const screen = session.terminalSize;
    const got = await this.#listWithView(screen);
    if (got === null) return;
    const { listed, view } = got;
    // The size changed meanwhile: the view and the list are of another layout.
    const now = session.terminalSize;
    if (now.rows !== screen.rows || now.cols !== screen.cols) return;
    const { hints, dropped } = buildHints(listed, screen, options.extraSchemes ?? [], view);
    options.log?.(`link hints: ${hints.length} labelled of ${listed.length} listed (${JSON.stringify(dropped)})`);
    if (hints.length === 0) {
      session.notify(
        'info',
        dropped.refused > 0
          ? `No link on the screen that jackin would open (${dropped.refused} refused)`
          : dropped.unseen > 0
            ? `No link on the screen that jackin could check (${dropped.unseen} not shown where the capsule says)`
            : 'No links on the screen',
      );
      return;
    }
    const chosen = await this.#choose(hints, action, screen);
    if (chosen === null) return;
    const { hint, hold } = chosen;
    // The keys typed after the label wait until the prompt is answered, then go to the program.
    const answered = (): void => hold.dispose();
    try {
      if (action === 'copy') await this.#copy(hint, answered);
      else {
        // The capsule chose these targets: the host's prompt shows the exact one before anything opens.
        const asking = {
          ...pickSession(session),
          confirm: async (r: ConfirmRequest): Promise<boolean> => {
            try {
              return await session.confirm({ ...r, ...shownLabel(hint) });
            } finally {
              answered();
            }
          },
        };
        const keepFailed = this.#options.keepFailed;
        await openUrlChecked(
          asking,
          { env: this.#env, opener: this.#opener, ...this.#extra, ...(keepFailed === undefined ? {} : { keepFailed }) },
          hint.checked.href,
          hint.source,
          true,
        );
      }
    } finally {
      answered();
    }
  }

  dispose(): void {
    this.#store.dispose();
  }

  /**
   * Shows the labels and waits for the operator: the chosen hint, or null on Esc. Keys typed after the label
   * in the same read go back to the session as typed input; a choice holds them (`hold`) until its action
   * is done, so they reach the program after it and never answer a prompt drawn after them.
   */
  #choose(hints: readonly Hint[], action: HintAction, listedAt: { rows: number; cols: number }): Promise<{ hint: Hint; hold: Disposable } | null> {
    const session = this.#session;
    const now = this.#now;
    return new Promise((resolve) => {
      let typed = '';
      let shown: Disposable | null = null;
      let shownAt = Infinity;
      const finish = (chosen: { hint: Hint; hold: Disposable } | null): void => {
        this.#choosing.delete(finish);
        shown?.dispose();
        shown = null;
        resolve(chosen);
      };
      const handle = (ev: InputEvent): Buffer | void => {
        let keys: Array<{ key: Parameters<typeof hintKey>[2]; end: number }>;
        if (ev.type === 'palette-key') keys = [{ key: 'palette', end: 0 }];
        else if (ev.type === 'bytes') keys = decodeKeyEnds(ev.bytes);
        else return; // pastes, clicks and paste-key presses do nothing while the labels are up
        // Typed before the operator could have read the labels: meant for the program, never a choice.
        const early = now() - shownAt < CONFIRM_ARM_MS;
        const rest = (end: number): Buffer => (ev.type === 'bytes' ? ev.bytes.subarray(end) : Buffer.alloc(0));
        for (const { key, end } of keys) {
          const r = hintKey(hints, typed, key);
          if (early && r.type !== 'cancel') continue;
          if (r.type === 'cancel') {
            finish(null);
            return rest(end);
          }
          if (r.type === 'chosen') {
            // Taken before the rest is routed: the session holds it while the action runs.
            finish({ hint: r.hint, hold: session.holdInput() });
            return rest(end);
          }
          typed = r.typed;
        }
      };
      const title = action === 'open' ? 'open' : 'copy';
      const draw = (size: { rows: number; cols: number }): string => {
        // A resize reflows the screen: the labels would mark other text. They go, and the palette can list again.
        if (size.rows !== listedAt.rows || size.cols !== listedAt.cols) {
          queueMicrotask(() => finish(null));
          return '';
        }
        // The host's own line at the bottom says what the labels are for; labels drawn after it stay on top.
        // Cut short of the last column: a character there on the last row could make the terminal scroll.
        const text = cutColumns(` jackin: type a label to ${title} its link, Esc to leave `, Math.max(0, size.cols - 1));
        const help = `\x1b[${size.rows};1H\x1b[0;7m${text}\x1b[0m\x1b[K`;
        return `${size.rows > 1 ? help : ''}${renderHints(hints, size.cols)}`;
      };
      shown = session.showOverlay({ draw, handle });
      shownAt = now();
      // A session that ends with the labels up ends this too (it disposes the feature).
      if (this.#store.isDisposed) finish(null);
      else this.#choosing.add(finish);
    });
  }

  /**
   * The capsule chose the target, and the label may sit over other text (a lying list, or a program whose
   * wide characters the operator's terminal draws narrower): the host's prompt shows the whole target, as
   * for opening, and nothing reaches the clipboard before Enter. `answered` runs once the prompt closed.
   */
  async #copy(hint: Hint, answered: () => void): Promise<void> {
    const session = this.#session;
    const target = hint.checked.href;
    const logged = redactUrlForLog(target);
    const detail = hint.source === 'osc8' ? 'hyperlink target' : 'link on screen';
    const yes = await session.confirm({ kind: 'url', target, hyperlink: hint.source === 'osc8', verb: 'copy', ...shownLabel(hint) });
    answered();
    if (!yes) {
      session.notify('info', `Not copied: ${hint.checked.display}`);
      session.logAction({ action: 'copy-link', target: logged, result: 'cancelled', detail });
      return;
    }
    const writer = (this.#writer ??= this.#services.textWriter);
    try {
      await writer.write(target);
      session.notify('success', `Copied ${hint.checked.display} to the clipboard (${writer.name})`);
      session.logAction({ action: 'copy-link', target: logged, result: 'ok', detail });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.notify('error', `Could not copy the link: ${message}`);
      session.logAction({ action: 'copy-link', target: logged, result: 'failed', detail: message });
    }
  }

  /**
   * The capsule's list of links, and the host's own view of the screen it was listed from: the capsule
   * repaints, the host follows every byte of it (and of the output after it) as written to the operator's
   * terminal, and the list is asked for once that view is whole. Null (with a notice) when either fails.
   */
  async #listWithView(screen: { rows: number; cols: number }): Promise<{ listed: ListedLink[]; view: HostScreen } | null> {
    const session = this.#session;
    const options = this.#options;
    if (!hasFeature(session.features, 'link-list')) {
      session.notify('info', 'This capsule cannot list the links on the screen; update jackin-capsule in the container');
      return null;
    }
    const view = new HostScreen(screen.rows, screen.cols);
    let whole: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (whole = resolve));
    const tap = session.tapOutput((bytes) => {
      view.write(bytes);
      if (view.ready) whole();
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!session.repaint()) return null;
      const timeoutMs = options.listTimeoutMs ?? RESOLVE_TIMEOUT_MS;
      const repainted = await Promise.race([ready.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
      if (!repainted) {
        session.notify('warning', 'The capsule did not repaint the screen, so jackin cannot check its links; try again');
        return null;
      }
      const listed = await requestLinkList(session, options.listTimeoutMs);
      return listed === null ? null : { listed, view };
    } finally {
      clearTimeout(timer);
      tap.dispose();
    }
  }
}

export function installHintsFeature(session: HintsSession, options: HintsFeatureOptions = {}): HintsFeature {
  return new HintsFeature(session, options);
}
