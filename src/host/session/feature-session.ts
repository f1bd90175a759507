/**
 * What a host feature (paste, links, export, and the next ones) may use of the attach session, as narrow
 * capabilities: frames with the capsule (SessionFrames), notices and the action log (SessionNotices), palette
 * entries (SessionPalette), gestures, prompts and URL-open hooks (SessionRequests), the keyboard
 * (SessionInput), the operator's screen (SessionScreen) and terminal (SessionTerminal), and the session's life
 * (SessionLifetime). Each affordance's install takes the capabilities it uses (an intersection of them);
 * FeatureSession is all of them. A feature is `installXFeature(session, options)`, returns an object that is
 * also a Disposable, which the session keeps and disposes when it ends (`AttachSession.install`), and
 * registers everything it adds here in a DisposableStore:
 * - palette actions: `registerAction` (shown in the palette, run on the operator's choice);
 * - input: `addInputHook` claims paste-key, paste or mouse events (return true to consume the bytes);
 * - capsule frames the session does not handle itself: `onFrame`; operator gestures: `onGesture`;
 * - the operator: `notify` (the host's own notice), `containerNotice` (the container's text, marked `capsule:`).
 * The host's platform services (opener, clipboard, notifier, export directory) come in the install options
 * (platform/host-services.ts), built once per session. AttachSession implements FeatureSession; unit tests
 * drive features with a small fake of it.
 */
import type { Disposable, Emitter } from '../../disposable.ts';
import type { ClientFrame, Features, NoticeLevel, ServerFrame } from '../../protocol/index.ts';
import type { ActionResult } from '../instances/action-log.ts';
import type { ConfirmRequest } from './confirm-prompt.ts';
import type { HostRequestKind } from './gesture-gate.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import type { PaletteAction } from './palette.ts';
import type { UrlOpenHook, UrlOpenStep } from './url-open-hooks.ts';
import type { FilterEvent } from '../terminal/terminal-filter/context.ts';
import type { HostNeeds, ProgramModes } from '../terminal/terminal-filter/modes.ts';

/** A subscription point: call it with a listener, dispose the result to unsubscribe. */
type Event<T> = Emitter<T>['event'];

/** Something a feature does with an input event it claimed; return false to let the bytes through. */
export type InputHook = (ev: InputEvent) => boolean;
/** The input events a feature can claim. */
export type InputHookKind = 'pasteKey' | 'paste' | 'mouse';

/** An operator gesture: lets an upstream capsule's request that follows it through (gesture-gate.ts). */
export type Gesture = 'palette-key' | 'palette-action' | 'click';

/** One entry of the host's action log (action-log.ts); the session adds the time and the instance. */
export interface HostActionRecord {
  readonly action: string;
  readonly target: string;
  readonly result: ActionResult;
  readonly detail?: string;
}

/** One opening of the palette; `current` turns false when it closes. */
export interface PaletteOpening {
  readonly current: boolean;
}

/**
 * What an entry with a target acted on: the target its entry drew when it was chosen, held by the host
 * (never read again from the capsule), and whether the whole of it was drawn, literally.
 */
export interface ShownTarget {
  /** Null when the entry named no target (nothing offered, or the offer could not be read). */
  readonly target: string | null;
  /** The entry drew the whole target as it is: choosing the entry was seeing it (no prompt needed). */
  readonly seen: boolean;
}

/** What an entry shows once its target is read (FeatureSession.showTarget). */
export interface TargetEntry {
  readonly title: string;
  /** Drawn after the title and never cut ("(forwards port 7803)"). */
  readonly suffix?: string;
  readonly target: string | null;
  /** The title holds the whole target as it is (no character made visible or left out). */
  readonly literal: boolean;
}

export interface SessionAction extends PaletteAction {
  /** `shown`: for an entry with `readsTarget`, what its entry drew when chosen. */
  run: (argument?: string, shown?: ShownTarget) => void | Promise<void>;
  /**
   * The entry acts on a target read anew at each palette opening (an offer): until the feature gives it with
   * `showTarget`, the entry is drawn with `pendingTitle` and cannot be chosen.
   */
  readsTarget?: {
    readonly pendingTitle: string;
    /** The entry was chosen while pending: logs the refusal and returns the line the palette shows. */
    readonly whilePending: () => string;
  };
}

/** Something a feature draws over the program's screen while it has the keyboard (link hints). */
export interface FeatureOverlay {
  /** What to draw for a screen of this size (cursor-addressed; the session wraps it as host drawing). */
  draw(size: { rows: number; cols: number }): string;
  /**
   * One input event while the overlay is up. Returns the typed bytes that followed the key that closed the
   * overlay in the same event (keys typed quickly after a label), for the session to route as typed input:
   * nothing when there are none.
   */
  handle(ev: InputEvent): Buffer | void;
}

/** The session's life. */
interface SessionLifetime {
  /** Settles when the session ends. */
  readonly done: Promise<unknown>;
}

/** Frames with the capsule: the extensions agreed, the frames the session passes on, the frames sent. */
export interface SessionFrames {
  /** Extensions agreed with the capsule (null for an upstream capsule or before Welcome). */
  readonly features: Features | null;
  /** Server frames the session does not handle itself (host requests, answers to features' requests). */
  readonly onFrame: Event<ServerFrame>;
  /** The capsule's Welcome (the terminal is raw by then): what a feature asks of the terminal waits for it. */
  readonly onWelcome: Event<{ sessions: number; features: Features | null }>;
  /** Sends a client frame; false means the transport is full (await `drained`) or the session ended. */
  sendFrame(f: ClientFrame): boolean;
  /** Resolves once the transport takes more bytes, or when the session ends. */
  drained(): Promise<void>;
}

/** Telling the operator, and the host's action log. */
export interface SessionNotices {
  /** Tells the operator the outcome of a host action: always drawn by the host itself, never sent to the capsule. */
  notify(level: NoticeLevel, text: string): void;
  /**
   * Shows text the container supplied (a program notification the desktop could not show) as what it is:
   * marked `capsule:` and queued with the capsule's notices (rate limited), so it never passes for the
   * host's own notice, pushes one out or delays it.
   */
  containerNotice(level: NoticeLevel, text: string): void;
  /** Appends a host action (or its refusal) to the host's log. */
  logAction(record: HostActionRecord): void;
}

/** The palette's entries. */
export interface SessionPalette {
  /** Adds a palette action; disposing removes it. */
  registerAction(action: SessionAction): Disposable;
  /** The palette opened (features refresh what their entries show, such as an offer's target). */
  readonly onPaletteOpen: Event<PaletteOpening>;
  /** Changes the title of a palette action already registered, and redraws the palette if open. */
  retitleAction(id: string, title: string): void;
  /**
   * Shows the target of an entry with `readsTarget` for one opening of the palette, which makes it
   * choosable; ignored once that opening closed (a late answer never changes a later opening's entry).
   */
  showTarget(id: string, opening: PaletteOpening, entry: TargetEntry): void;
}

/**
 * Operator gestures, and the host's decisions on what the capsule chose or asks: the one gesture gate, the
 * confirmation prompt, the hooks asked before a link opens.
 */
export interface SessionRequests {
  /** The operator made a gesture (palette key, palette action, modifier-click). */
  readonly onGesture: Event<Gesture>;
  /** Records a gesture a feature saw (a modifier-click). */
  gesture(g: Gesture): void;
  /**
   * Decides on one host request from an upstream capsule (one without our extensions): refused, with a
   * notice and a log entry, unless the operator allowed upstream requests and made a gesture just before
   * that no other request used (one gesture, one action, across every feature). `target` names it.
   */
  admitUpstream(kind: HostRequestKind, action: string, target: string): boolean;
  /**
   * Shows the host's confirmation of a target the capsule chose; resolves true only on Enter (at once
   * with JACKIN_CONFIRM=never). Nothing may happen before it resolves true.
   */
  confirm(request: ConfirmRequest): Promise<boolean>;
  /** Adds a hook asked before every link the operator opens (a login forward binds its callback port). */
  addUrlOpenHook(hook: UrlOpenHook): Disposable;
  /** What the hooks want done before `href` (checked) opens: prompt lines, and steps to run once confirmed. */
  urlOpenSteps(href: string): UrlOpenStep[];
}

/**
 * Sees every read from the operator's terminal before anything else (before input is held): takes out what
 * is an answer to the host's own question (the terminal's clipboard, OSC 5522) and returns the rest.
 * `reply` gets an OSC 5522 packet body the scanner found whole (no tap was taking answers then).
 */
export interface InputTap {
  take(chunk: Buffer): Buffer;
  reply(body: Buffer): void;
  /** Given, at addTap, the way to hand bytes it held back to the keyboard later (as a read of its own). */
  attach?(feed: (bytes: Buffer) => void): void;
}

/** The operator's keyboard. */
export interface SessionInput {
  /** Claims one kind of input event (the newest hook of a kind is asked first); disposing releases it. */
  addInputHook(kind: InputHookKind, hook: InputHook): Disposable;
  /** Sees every read from the terminal before anything else (the answers to a feature's own questions). */
  addInputTap(tap: InputTap): Disposable;
  /** Holds typed input until disposed (an image paste in progress): keys reach the program after it, in order. */
  holdInput(): Disposable;
  /** Sends bytes to the program as typed input. */
  sendInput(bytes: Buffer): void;
}

/** The operator's screen: its size, the host's own drawing over the program's, the program's output as written. */
export interface SessionScreen {
  /** The operator's screen size. */
  readonly terminalSize: { rows: number; cols: number };
  /** Writes terminal control sequences of our own to the operator's terminal. */
  writeTerminal(bytes: Buffer): void;
  /**
   * Draws `overlay` over the program's screen and gives it the keyboard until disposed: the program's output
   * is held meanwhile (the capsule's screen model keeps it) and disposing has the capsule repaint, so the
   * screen is as before. Only with a capsule that repaints (ours); one overlay at a time (a second one
   * replaces the first).
   */
  showOverlay(overlay: FeatureOverlay): Disposable;
  /**
   * The program output as written to the operator's terminal (after the host's filter), from now until
   * disposed: what the host checks the capsule's claims about the screen against (link hints).
   */
  tapOutput(listener: (bytes: Buffer) => void): Disposable;
  /** Has our capsule repaint the program's screen; false when it cannot (an upstream capsule). */
  repaint(): boolean;
}

/** The operator's terminal as the host's filter reads it, and what the host needs of it. */
export interface SessionTerminal {
  /** The modes the program asked for, as the host's terminal filter read them from its output. */
  readonly programModes: Readonly<ProgramModes>;
  /** Changes what the host needs from the operator's terminal (composed with the program's modes). */
  setHostNeeds(needs: Partial<HostNeeds>): void;
  /** Something the terminal filter found in the program's output (copy offers, clipboard queries...). */
  readonly onTerminalEvent: Event<FilterEvent>;
  /** The program's last window title (OSC 0/2), inert; null before its first. */
  readonly programTitle: string | null;
  /**
   * Where program notifications go besides their event: to the operator's terminal (inert) or not, and
   * whether a BEL in the program's text is a notification event too.
   */
  routeNotifications(route: { terminal: boolean; bell: boolean }): void;
  /** Whether the operator's terminal last reported focus (in) or not (out); null before any report. */
  readonly terminalFocused: boolean | null;
  /** The operator's terminal reported focus in (true) or out (false). */
  readonly onFocusChange: Event<boolean>;
}

/**
 * Everything a feature may use of the session: the capabilities above, together. AttachSession implements
 * it; each affordance's install takes only the capabilities it uses (an intersection of them).
 */
export interface FeatureSession
  extends SessionLifetime,
    SessionFrames,
    SessionNotices,
    SessionPalette,
    SessionRequests,
    SessionInput,
    SessionScreen,
    SessionTerminal {}
