/**
 * Program notifications on the host desktop (issue 37), wired into an attach session. The terminal filter
 * turns OSC 9, OSC 99 (kitty's, its chunks joined) and OSC 777 `notify` into events with inert text, within
 * its rate limit (docs/terminal-policy.md); this affordance sends each one to the host's desktop notifier
 * (platform/notifier.ts) and/or lets it pass to the operator's terminal, as JACKIN_NOTIFY says:
 * - `desktop`: the notifier only; `terminal`: the terminal only (as before this affordance); `both`;
 *   `deny` (also off/no/0/false): neither (the filter drops them).
 * - unset: `desktop` where a notifier can answer (notify-send with a session bus, osascript, PowerShell),
 *   else `terminal`. When the desktop notifier fails, that notification is shown as a capsule notice instead
 *   (marked `capsule:`, in the container's rate-limited queue: the text is the program's), and the host says
 *   so once a session in a notice of its own that quotes none of the program's text.
 * - JACKIN_NOTIFY_BELL=unfocused (opt-in): while the operator's terminal reports that it is unfocused, a BEL
 *   from the program is a notification too. The host asks the terminal for focus reports (`?1004h`) for
 *   this; they reach the program only when it asked for them itself.
 * The title is the program's (OSC 777's own, else its window title), else the instance name; one that
 * starts like jackin's is marked as the program's (program-title.ts). Every notification is a line in the
 * host's action log.
 */
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { inertText } from '../../ui/inert-text.ts';
import { createHostServices, type HostServices } from '../platform/host-services.ts';
import { bellWanted, effectiveNotifyMode, type Notifier, type NotifyMode } from '../platform/notifier.ts';
import type { SessionNotices, SessionTerminal } from '../session/feature-session.ts';
import { markProgramTitle } from './program-title.ts';
import type { FilterEvent } from '../terminal/terminal-filter/context.ts';
import { NOTIFICATION_MAX_COLUMNS, TITLE_MAX_COLUMNS } from '../terminal/terminal-filter/osc-policy.ts';

export interface NotifyFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** The instance name: the title when the program gave none. */
  instance: string;
  /** The session's platform services (default: the feature's own, from `env`). */
  services?: HostServices;
  notifier?: Notifier;
  log?: (line: string) => void;
}

/** What the notify feature uses of the session. */
export type NotifySession = SessionNotices & SessionTerminal;

/** The notify affordance of one attached session; installNotifyFeature() makes it. */
export class NotifyFeature implements Disposable {
  readonly mode: NotifyMode;
  readonly #session: NotifySession;
  readonly #store = new DisposableStore();
  readonly #instance: string;
  readonly #notifier: Notifier | null;
  readonly #desktop: boolean;
  readonly #terminalToo: boolean;
  readonly #bell: boolean;
  #pending: Promise<void> = Promise.resolve();
  /** The host's own notice of a failed desktop notification is shown once a session: a program cannot flood with it. */
  #failureTold = false;

  constructor(session: NotifySession, options: NotifyFeatureOptions) {
    this.#session = session;
    this.#instance = options.instance;
    const env = options.env ?? options.services?.env ?? process.env;
    const services = options.services ?? createHostServices({ env: env as NodeJS.ProcessEnv });
    let mode: NotifyMode;
    let notifier: Notifier | null = options.notifier ?? null;
    try {
      notifier ??= services.notifier;
      mode = effectiveNotifyMode(env, notifier);
    } catch (e) {
      // A bad JACKIN_NOTIFY or JACKIN_NOTIFIER: said once, and notifications stay on the terminal as before.
      session.notify('warning', `${e instanceof Error ? e.message : String(e)}; notifications go to the terminal`);
      notifier = null;
      mode = 'terminal';
    }
    this.mode = mode;
    this.#notifier = notifier;
    this.#desktop = (mode === 'desktop' || mode === 'both') && notifier !== null;
    // Shown on the terminal too for `terminal` and `both`, and when there is no notifier to send them to.
    this.#terminalToo = !this.#desktop || mode === 'both';
    this.#bell = this.#desktop && bellWanted(env);
    if (mode === 'deny') {
      // The filter already drops them (filterOptionsFromEnv): nothing to route.
      return;
    }
    const bell = this.#bell;
    options.log?.(
      `notifications: ${mode}${notifier === null ? '' : ` (notifier ${notifier.name}: ${notifier.selection.reason})`}${bell ? ', bell while unfocused' : ''}`,
    );
    this.#route();
    if (bell) {
      // The terminal reports focus for the host; the bell counts only while it says it is unfocused.
      session.setHostNeeds({ focusReports: true });
      this.#store.add(session.onFocusChange(() => this.#route()));
      this.#store.add({ dispose: () => session.setHostNeeds({ focusReports: false }) });
    }
    this.#store.add(session.onTerminalEvent((ev) => void (ev.type === 'notification' && this.#onNotification(ev))));
  }

  /** Settles when every notification handed to the notifier so far has been shown or failed (tests). */
  idle(): Promise<void> {
    return this.#pending;
  }

  dispose(): void {
    this.#store.dispose();
  }

  #route(): void {
    this.#session.routeNotifications({ terminal: this.#terminalToo, bell: this.#bell && this.#session.terminalFocused === false });
  }

  #onNotification(ev: Extract<FilterEvent, { type: 'notification' }>): void {
    const session = this.#session;
    const terminalToo = this.#terminalToo;
    // The filter made the text inert; cut again here, as this is what leaves for the desktop.
    const title = inertText(ev.title ?? session.programTitle ?? this.#instance, TITLE_MAX_COLUMNS);
    const body = inertText(ev.body, NOTIFICATION_MAX_COLUMNS);
    const detail = `${ev.source}: ${body}`;
    const n = this.#notifier;
    if (!this.#desktop || n === null) {
      session.logAction({ action: 'notify', target: title, result: 'ok', detail: `terminal; ${detail}` });
      return;
    }
    const shown = markProgramTitle(title);
    this.#pending = this.#pending.then(async () => {
      try {
        await n.notify(shown, body);
        session.logAction({ action: 'notify', target: title, result: 'ok', detail: `${n.name}${terminalToo ? ' and terminal' : ''}; ${detail}` });
      } catch (e) {
        // The message names the notifier and how it failed, never the program's text (notifier.ts); what the
        // notifier printed, which may echo that text, is its cause: for the log only, made inert there.
        const message = e instanceof Error ? e.message : String(e);
        const said = e instanceof Error && e.cause instanceof Error ? `: ${inertText(e.cause.message, NOTIFICATION_MAX_COLUMNS)}` : '';
        session.logAction({ action: 'notify', target: title, result: 'failed', detail: `${message}${said}; ${detail}` });
        if (terminalToo) return;
        if (!this.#failureTold) {
          this.#failureTold = true;
          session.notify('warning', `A program notification could not be shown on the desktop (${message}); failed ones show as capsule notices`);
        }
        // Not lost: shown as what it is, the container's text (the filter's rate limit and the container
        // notice queue's bound how many).
        session.containerNotice('info', `${shown}: ${body}`);
      }
    });
  }
}

export function installNotifyFeature(session: NotifySession, options: NotifyFeatureOptions): NotifyFeature {
  return new NotifyFeature(session, options);
}
