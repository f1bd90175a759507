/**
 * What the policy functions of the terminal filter (csi-policy.ts, osc-policy.ts) see of the filter:
 * options, tracked state and the event sink. Pure types and the decision constants.
 */
import type { RateLimiter } from '../../platform/rate-limiter.ts';
import type { HostNeeds, ProgramColours, ProgramModes, TrackedState } from './modes.ts';
import type { KittyNotifications } from './kitty-notifications.ts';
import type { ReplyExpectations } from './replies.ts';

/** Something the host acts on, found in the program's output. */
export type FilterEvent =
  /**
   * An OSC 52 write that passed every check: valid base64, UTF-8, at most MAX_COPY_BYTES decoded. `text`
   * is what a copy puts on the clipboard (control characters but tab, LF and CR removed, `removed` of them).
   */
  | { type: 'copy-offer'; text: string; bytes: number; removed: number }
  /** An OSC 52 write that did not pass (the reason is the host's own words). */
  | { type: 'copy-refused'; reason: string }
  /** An OSC 52 query: nothing is answered. */
  | { type: 'clipboard-query' }
  /** The program asked for a change of the composed modes (mouse, paste, focus, alternate screen). */
  | { type: 'modes'; modes: Readonly<ProgramModes> }
  /**
   * The program left its alternate screen while jackin holds the terminal's (holdAltScreen): the terminal
   * cannot bring back the program's normal screen, so the host asks the capsule to repaint it.
   */
  | { type: 'alt-left' }
  /**
   * A program notification (OSC 9, OSC 99 once its last chunk is in, OSC 777 notify) or, when asked for, a
   * bell (BEL in the text): inert (no control, bidi or escape character), cut, and within the notification
   * rate limit. `title` is the program's own (OSC 777, OSC 99 with a title and a body), else null.
   */
  | { type: 'notification'; source: NotificationSource; title: string | null; body: string }
  /** A sequence the policy removed (for --verbose diagnostics); `what` is a fixed label, never program text. */
  | { type: 'dropped'; what: string };

type NotificationSource = 'osc9' | 'osc99' | 'osc777' | 'bell';

export interface TerminalFilterOptions {
  /** Program notifications (OSC 9/99/777), made inert and rate limited; false drops them (JACKIN_NOTIFY=deny). */
  notify?: boolean;
  /** Sixel (DCS q) and kitty graphics (APC G) pass only when true (JACKIN_GRAPHICS=allow). */
  graphics?: boolean;
  /** Operator-configured URL schemes beyond http/https/mailto, for OSC 8 targets. */
  extraSchemes?: readonly string[];
  /** Shared with the input side, which forwards only replies that are due. */
  expectations?: ReplyExpectations;
  hostNeeds?: HostNeeds;
  /** Monotonic clock in ms for the notification rate limit (tests). */
  now?: () => number;
  onEvent?: (ev: FilterEvent) => void;
}

/** Pass the sequence as received (7-bit form). */
export const PASS = 1;
/** Remove the sequence. */
export const DROP = 0;
/** PASS, DROP, or the bytes to write instead (latin1/ASCII or UTF-8 string, written as UTF-8). */
export type Decision = typeof PASS | typeof DROP | string;

export interface FilterContext {
  readonly notify: boolean;
  /** Notifications pass (inert) to the operator's terminal; false: only the event (JACKIN_NOTIFY=desktop). */
  readonly notifyTerminal: boolean;
  /** The program's last title (OSC 0/2), inert and cut; null before its first. */
  programTitle: string | null;
  readonly graphics: boolean;
  readonly extraSchemes: readonly string[];
  readonly expectations: ReplyExpectations;
  readonly tracked: TrackedState;
  readonly program: ProgramModes;
  /** The colours the program set (OSC 4/10/11), kept so they can be put back after host UI. */
  readonly colours: ProgramColours;
  /** Host UI is up: the program's colour changes are recorded in `colours`, not written. */
  readonly hostColoursHeld: boolean;
  readonly notifications: RateLimiter;
  /** OSC 99 chunks pending per id (kitty-notifications.ts). */
  readonly kittyNotifications: KittyNotifications;
  event(ev: FilterEvent): void;
  dropped(what: string): typeof DROP;
  /** Call after changing `program`: the sequences that bring the terminal's composed modes in line. */
  programModesChanged(): string;
  /**
   * Call when a soft reset passes: what the reset turned off for the program is recorded as off, and the
   * sequences that state the composed modes again (the host's click capture and bracketed paste).
   */
  softReset(): string;
  /** jackin holds the terminal's alternate screen: the program's own switches are emulated (filter.ts, holdAltScreen). */
  readonly holdsAltScreen: boolean;
  /** Call when the program leaves its (emulated) alternate screen. */
  altLeft(): void;
}
