/**
 * The host side of one attach session (protocol.md section 6): Hello, then every input byte forwarded
 * unchanged, SIGWINCH as Resize, Output to the operator's terminal with backpressure, Bell, extension
 * negotiation (ExtHello), ExitStatus and Notice, and the detach keys. It does not own the terminal's
 * lifecycle: the caller enters raw mode before and restores after (see cli/jackin.ts), so every exit path
 * restores in one place.
 *
 * The session wires its parts and decides how it ends; each part is its own module:
 * - frame-relay.ts: frames on the transport, backpressure both ways, program output to the terminal;
 * - input-router.ts: the keyboard (scanner, flush timers, held input, the features' input hooks);
 * - palette-controller.ts: the palette and its actions; notice-overlay.ts: the host's notices;
 * - handshake.ts: Hello and the extensions; attach-outcome.ts: how a session ends.
 * - host-requests.ts: the one gesture gate, confirmations and the host action log;
 * - modal-stack.ts: which of the prompt, a feature's overlay and the palette has the keyboard.
 * Features use it through the capabilities of feature-session.ts, and are installed on it (`install`): it
 * disposes them when it ends. Frames it does not handle itself go to them (`onFrame`), unnamed.
 * (Over 350 lines on purpose: it is only the wiring of these parts and the FeatureSession surface they
 * share; each part's logic lives in its own module.)
 */
import { UrlOpenHooks, type UrlOpenHook, type UrlOpenStep } from './url-open-hooks.ts';
import { DisposableStore, Emitter, toDisposable, type Disposable } from '../../disposable.ts';
import {
  hasFeature,
  SERVER_TAGS,
  type ClientFrame,
  type FeatureName,
  type Features,
  type NoticeLevel,
  type ProtocolError,
  type ServerFrame,
} from '../../protocol/index.ts';
import type { Transport } from '../../transport/transport.ts';
import type { AttachOutcome } from './attach-outcome.ts';
import type { ConfirmController } from './confirm-controller.ts';
import type { ConfirmRequest } from './confirm-prompt.ts';
import type {
  FeatureOverlay,
  FeatureSession,
  Gesture,
  HostActionRecord,
  InputHook,
  InputHookKind,
  InputTap,
  PaletteOpening,
  SessionAction,
  TargetEntry,
} from './feature-session.ts';
import { hostDrawn } from '../../ui/host-draw.ts';
import type { HostRequestKind } from './gesture-gate.ts';
import { HostRequests } from './host-requests.ts';
import { FrameRelay } from './frame-relay.ts';
import { helloFrame, negotiateFeatures } from './handshake.ts';
import { scannerOptionsFromEnv, type InputScannerOptions } from '../terminal/input-scan.ts';
import { InputRouter } from './input-router.ts';
import { PlainInput } from './plain-input.ts';
import { NoticeOverlay } from './notice-overlay.ts';
import { ModalStack } from './modal-stack.ts';
import { PaletteController } from './palette-controller.ts';
import { createRateLimiter } from '../platform/rate-limiter.ts';
import type { HostTerminal } from '../terminal/terminal.ts';
import type { HostNeeds, ProgramModes } from '../terminal/terminal-filter/modes.ts';

export { HOST_FEATURES, negotiateFeatures } from './handshake.ts';
export { outcomeExit, type AttachOutcome } from './attach-outcome.ts';
export { ESCAPE_FLUSH_MS, PASTE_FLUSH_MS } from './input-router.ts';
export type { InputHook, SessionAction } from './feature-session.ts';

/** After asking to detach, how long to wait for the capsule's Shutdown before just closing (a close is a detach too). */
export const DETACH_REPLY_TIMEOUT_MS = 2_000;
/** How long to wait for a relay to report why it ended, before giving the reason without it. */
export const FAILURE_DETAIL_TIMEOUT_MS = 1_000;
/**
 * How long the host waits for the capsule's Welcome after its Hello. A capsule that never answers would
 * otherwise keep the operator's terminal in raw mode, with a palette key held for the Welcome (no detach).
 */
export const WELCOME_TIMEOUT_MS = 20_000;
/**
 * How long the palette waits for the capsule's RepliesHeld (extension `held-replies`) before it is drawn
 * anyway, and how long the output stays held after the palette closed when the capsule does not mark the end.
 */
export const HOLD_REPLIES_TIMEOUT_MS = 1_000;
const DETACH_REQUEST_ID = 1n;
const BEL = Buffer.from([0x07]);

/** The server frames the session handles itself; every other one is passed on to the affordances. */
type SessionFrame = Extract<
  ServerFrame,
  { type: 'Output' | 'Welcome' | 'Bell' | 'RepliesHeld' | 'ExitStatus' | 'Notice' | 'Shutdown' | 'AttachControlResponse' }
>;
/** The frames passed on to the affordances (`onFrame`), whatever their type. */
type PassedOnFrame = Exclude<ServerFrame, SessionFrame>;

export interface AttachOptions {
  transport: Transport;
  terminal: HostTerminal;
  /** Instance name, for messages. */
  name: string;
  env?: NodeJS.ProcessEnv;
  /** Diagnostics (--verbose); called with one line without a line ending. */
  log?: (line: string) => void;
  /** Scanner options (keys); default from JACKIN_PASTE_KEY / JACKIN_PALETTE_KEY. */
  scanner?: InputScannerOptions;
  /** Clock for notices (tests). */
  now?: () => number;
  /** `--allow-upstream-requests`: honour an upstream capsule's host requests, one per gesture (also JACKIN_UPSTREAM_REQUESTS=allow). */
  allowUpstreamRequests?: boolean;
  /** JACKIN_HOME, for the host's action log; default from env. */
  home?: string;
  /** WELCOME_TIMEOUT_MS (tests). */
  welcomeTimeoutMs?: number;
  /**
   * No terminal to drive (`jackin run` with stdin or stdout redirected): stdin goes to the program as data
   * (plain-input.ts), nothing of the host's is drawn or switched on, and notices are lines for `report`.
   */
  plain?: { report: (line: string) => void };
  /** The keys hint to show once the capsule welcomed this host (keys-hint.ts); none when unset. */
  keysHint?: string | null;
  /** Extensions not to announce in ExtHello though the capsule offers them (`ports`: no port events wanted). */
  withoutFeatures?: readonly FeatureName[];
}

export class AttachSession implements FeatureSession {
  readonly done: Promise<AttachOutcome>;
  #resolveDone!: (o: AttachOutcome) => void;
  #finished = false;
  /** Everything the session holds (listeners, timers, parts); released together when it ends. */
  readonly #store = new DisposableStore();
  readonly #relay: FrameRelay;
  readonly #palette: PaletteController;
  readonly #input: InputRouter;
  readonly #overlay: NoticeOverlay;
  readonly #confirmer: ConfirmController;
  /** Which of the prompt, a feature's overlay and the palette has the screen and the keyboard. */
  readonly #modals: ModalStack;
  /** One gesture gate for every feature, the operator's switches, confirmations and the action log. */
  readonly #requests: HostRequests;
  readonly #noticeEmitter = this.#store.add(new Emitter<{ level: NoticeLevel; text: string }>());
  readonly #frameEmitter = this.#store.add(new Emitter<ServerFrame>());
  readonly #welcomeEmitter = this.#store.add(new Emitter<{ sessions: number; features: Features | null }>());
  readonly #gestureEmitter = this.#store.add(new Emitter<Gesture>());
  readonly #focusEmitter = this.#store.add(new Emitter<boolean>());
  /** The operator's terminal reported focus in or out (reports are on while the program or a feature wants them). */
  readonly onFocusChange = this.#focusEmitter.event;
  terminalFocused: boolean | null = null;
  /** A Notice frame from the capsule (as sent; it is also shown, marked as the capsule's). */
  readonly onNotice = this.#noticeEmitter.event;
  /** Server frames this module does not handle (host requests for features, answers to their requests). */
  readonly onFrame = this.#frameEmitter.event;
  readonly onWelcome = this.#welcomeEmitter.event;
  /** The operator pressed the palette key, chose a palette action or made a modifier-click. */
  readonly onGesture = this.#gestureEmitter.event;
  readonly onPaletteOpen: FeatureSession['onPaletteOpen'];
  /** The affordances installed on the session (`install`). */
  readonly #installed = new DisposableStore();
  #exitStatus: number | null = null;
  #detaching = false;
  #negotiated: Features | null = null;
  #welcomed = false;
  /** WELCOME_TIMEOUT_MS after Hello; cleared by the Welcome, so an idle session has no timer armed. */
  #noWelcome: NodeJS.Timeout | undefined;
  /** Malformed frames are each skipped, but told to the operator at most this often (a flood stays quiet). */
  readonly #skippedNotices = createRateLimiter({ max: 3, windowMs: 10_000 });

  /** stdin as data, for a session without a terminal (`plain`). */
  #plainInput: PlainInput | null = null;

  readonly #o: AttachOptions;
  constructor(o: AttachOptions) {
    this.#o = o;
    this.done = new Promise((resolve) => (this.#resolveDone = resolve));
    const { terminal } = o;
    this.#relay = this.#store.add(new FrameRelay(o.transport, terminal, () => !this.#detaching));
    this.#palette = this.#store.add(
      new PaletteController({
        terminal,
        notify: (level, text) => this.notify(level, text),
        // The capsule repaints the program's screen, which kept updating meanwhile.
        closed: () => this.#modalClosed(),
        holdOutput: (ready) => this.#holdReplies(ready),
      }),
    );
    this.#store.add(this.#palette.onChoose(() => this.gesture('palette-action')));
    this.onPaletteOpen = this.#palette.onOpen;
    this.#store.add(this.#palette.onOpen(() => this.#withdrawHint()));
    this.#requests = this.#store.add(
      new HostRequests({
        ...o,
        env: o.env ?? process.env,
        notify: (level, text) => this.notify(level, text),
        // The capsule repaints the program's screen, which kept updating under the prompt.
        confirmClosed: () => this.#modalClosed(),
        ended: () => this.#finished,
      }),
    );
    this.#confirmer = this.#requests.confirmer;
    this.#modals = new ModalStack({ prompt: this.#confirmer, palette: this.#palette, drawOverlay: () => this.#drawFeatureOverlay() });
    this.#overlay = this.#store.add(new NoticeOverlay({ terminal, modals: this.#modals, repaint: () => this.repaint(), ...(o.now ? { now: o.now } : {}) }));
    this.#input = this.#store.add(
      new InputRouter({
        scanner: o.scanner ?? scannerOptionsFromEnv(o.env ?? process.env),
        palette: this.#palette,
        modals: this.#modals,
        sendInput: (bytes) => {
          // The operator typed: the keys hint goes at the first key (not at the terminal's own replies, which
          // the router keeps from the program).
          this.#withdrawHint();
          this.sendInput(bytes);
        },
        active: () => !this.#detaching && !this.#finished,
        drawsOverlay: () => (this.#welcomed ? this.drawsOverlay : null),
        gesture: (g) => this.gesture(g),
        filter: terminal.filter,
        focusReport: (focused) => {
          if (this.terminalFocused === focused) return;
          this.terminalFocused = focused;
          this.#focusEmitter.fire(focused);
        },
        ...(o.log ? { log: o.log } : {}),
      }),
    );
    this.registerAction({ id: 'detach', title: 'Detach (the program keeps running)', key: 'd', run: () => this.detach() });
    this.registerAction({
      id: 'send-palette-key',
      title: 'Send the palette key to the program',
      key: 'palette',
      run: () => this.sendInput(Buffer.from([0x1c])),
    });
    this.registerAction({ id: 'redraw', title: 'Redraw the screen', key: 'r', run: () => void this.repaint() });
  }

  /**
   * Keeps an installed affordance (what its `install...Feature` returned) for the session's life: the
   * session disposes every one when it ends, newest first (at once when it has ended already).
   */
  install<T extends Disposable>(feature: T): T {
    return this.#installed.add(feature);
  }

  /** Adds a palette action (features register theirs before start); disposing removes it. */
  registerAction(action: SessionAction): Disposable {
    return this.#palette.register(action);
  }

  /** Lets a feature claim paste-key, paste or mouse events; disposing releases them. */
  addInputHook(kind: InputHookKind, hook: InputHook): Disposable {
    return this.#input.addHook(kind, hook);
  }

  /** Lets a feature see every read from the terminal first (the answers to its own questions); disposing removes it. */
  addInputTap(tap: InputTap): Disposable {
    return this.#input.addTap(tap);
  }

  /** Records an operator gesture (features report modifier-clicks). */
  gesture(g: Gesture): void {
    this.#requests.gestures.record(g);
    this.#gestureEmitter.fire(g);
  }

  // Decisions on host requests and capsule-chosen targets, and the action log (host-requests.ts).
  readonly logAction = (record: HostActionRecord): void => this.#requests.logAction(record);
  /** Resolves once every action logged so far is written. */
  readonly actionsLogged = (): Promise<void> => this.#requests.actionsLogged();
  readonly admitUpstream = (kind: HostRequestKind, action: string, target: string): boolean => this.#requests.admitUpstream(kind, action, target);
  readonly confirm = (request: ConfirmRequest): Promise<boolean> => {
    // Nobody at a terminal to answer (plain): what needs a yes is not done.
    if (this.#o.plain !== undefined) return Promise.resolve(false);
    const answer = this.#requests.confirm(request);
    if (this.#confirmer.isOpen) this.#holdForUi();
    return answer;
  };

  readonly #urlOpenHooks = new UrlOpenHooks();
  addUrlOpenHook(hook: UrlOpenHook): Disposable {
    return this.#urlOpenHooks.add(hook);
  }
  urlOpenSteps(href: string): UrlOpenStep[] {
    return this.#urlOpenHooks.steps(href);
  }

  showOverlay(overlay: FeatureOverlay): Disposable {
    this.#modals.showOverlay(overlay);
    this.#holdForUi();
    // The operator's colours while it is up, as for the palette (the program's are put back after).
    const colours = this.#o.terminal.hostColours();
    this.#drawFeatureOverlay();
    return toDisposable(() => {
      if (!this.#modals.hideOverlay(overlay) || this.#finished) {
        colours.dispose();
        return;
      }
      // The capsule repaints the program's screen, which kept updating under the overlay.
      this.#modalClosed();
      colours.dispose();
    });
  }

  tapOutput(listener: (bytes: Buffer) => void): Disposable {
    return this.#o.terminal.tapOutput(listener);
  }

  #drawFeatureOverlay(): void {
    const o = this.#modals.overlay;
    // Drawn like the palette: after resetting what the program may have set against it (src/ui/host-draw.ts).
    if (o !== null && !this.#finished) this.#o.terminal.write(Buffer.from(hostDrawn(o.draw(this.#o.terminal.size()), true), 'utf8'));
  }

  retitleAction(id: string, title: string): void {
    this.#palette.retitle(id, title);
  }

  showTarget(id: string, opening: PaletteOpening, entry: TargetEntry): void {
    this.#palette.showTarget(id, opening, entry);
  }

  /** True when this host draws its own palette and notices (our capsule, which repaints on request). */
  get drawsOverlay(): boolean {
    return hasFeature(this.#negotiated, 'repaint');
  }

  /**
   * Tells the operator the outcome of a host action. Always drawn by the host itself, whatever the capsule:
   * a capsule cannot hide, delay or fake it, and host paths never go to the container (no HostNotice).
   */
  notify(level: NoticeLevel, text: string): void {
    this.#o.log?.(`notice (${level}): ${text}`);
    if (this.#finished) return;
    if (this.#o.plain !== undefined) this.#o.plain.report(text);
    else this.#overlay.post(level, text, 'host');
  }

  /**
   * Shows text the container said (a Notice frame, a program notification the desktop could not show). The
   * container is untrusted: marked so it cannot pass for the host's own notice, and queued apart (rate
   * limited) so it can never push one of the host's notices out.
   */
  containerNotice(level: NoticeLevel, text: string): void {
    this.#o.log?.(`capsule notice (${level}): ${text}`);
    if (this.#finished) return;
    if (this.#o.plain !== undefined) this.#o.plain.report(`capsule: ${text}`);
    else this.#overlay.post(level, `capsule: ${text}`, 'container');
  }

  /** Holds typed input until disposed (an image paste in progress): keys reach the program after the path. */
  holdInput(): Disposable {
    return this.#input.hold();
  }

  /** Sends bytes to the program as typed input. */
  sendInput(bytes: Buffer): void {
    if (bytes.length > 0) this.#relay.send({ type: 'Input', bytes });
  }

  /** Sends any client frame (features use this for image transfers and extension requests). */
  sendFrame(f: ClientFrame): boolean {
    return this.#relay.send(f);
  }

  /** The host's notices waiting to be drawn (a flood of them is told only a few times). */
  get noticesPending(): number {
    return this.#overlay.pending;
  }

  get terminalSize(): { rows: number; cols: number } {
    return this.#o.terminal.size();
  }

  /** Extensions agreed with the capsule (null for an upstream capsule or before Welcome). */
  get features(): Features | null {
    return this.#negotiated;
  }

  /**
   * Resolves once the transport takes more bytes (after a sendFrame that returned false), or when the
   * session ends. Features sending megabytes await it between frames, so output and keys keep flowing.
   */
  drained(): Promise<void> {
    return this.#relay.drained();
  }

  /** Writes terminal control sequences of our own to the operator's terminal. */
  writeTerminal(bytes: Buffer): void {
    // Without a terminal, the output is the program's bytes only (the host's would corrupt a pipe).
    if (!this.#finished && this.#o.plain === undefined) this.#o.terminal.write(bytes);
  }

  // The terminal filter's view of the program, and the host's own needs of the terminal (feature-session.ts).
  get programModes(): Readonly<ProgramModes> {
    return this.#o.terminal.filter.program;
  }
  get onTerminalEvent(): FeatureSession['onTerminalEvent'] {
    return this.#o.terminal.onFilterEvent;
  }
  setHostNeeds(needs: Partial<HostNeeds>): void {
    if (!this.#finished && this.#o.plain === undefined) this.#o.terminal.setHostNeeds(needs);
  }
  get programTitle(): string | null {
    return this.#o.terminal.filter.programTitle;
  }
  routeNotifications(route: { terminal: boolean; bell: boolean }): void {
    this.#o.terminal.filter.notifyTerminal = route.terminal;
    this.#o.terminal.filter.bellEvents = route.bell;
  }

  /** Sends Hello and starts relaying. Returns `done`. */
  start(): Promise<AttachOutcome> {
    const { terminal } = this.#o;
    this.#relay.send(helloFrame(terminal.size(), this.#o.env ?? process.env));
    // Bracketed paste always: the host tells pastes from typing (docs/terminal-policy.md, "Modes").
    if (this.#o.plain === undefined) terminal.setHostNeeds({ bracketedPaste: true });
    this.#store.add(terminal.onFilterEvent((e) => void (e.type === 'dropped' && this.#o.log?.(`terminal filter dropped ${e.what}`))));
    // The program left its alternate screen while jackin holds the terminal's: its normal screen is the capsule's to repaint.
    this.#store.add(terminal.onFilterEvent((e) => void (e.type === 'alt-left' && this.repaint())));
    this.#store.add(this.#relay.onFrame((f) => this.#onServerFrame(f)));
    this.#store.add(this.#relay.onSkipped((e) => this.#onSkipped(e)));
    this.#store.add(this.#relay.onBroken((reason) => void this.#lose(reason)));
    this.#store.add(this.#relay.onEnd(() => this.#onServerEnd()));
    this.#relay.start();
    const welcomeMs = this.#o.welcomeTimeoutMs ?? WELCOME_TIMEOUT_MS;
    this.#noWelcome = setTimeout(() => {
      if (!this.#welcomed) void this.#lose(`the capsule did not answer the handshake within ${welcomeMs / 1000} s`);
    }, welcomeMs);
    this.#store.add(toDisposable(() => clearTimeout(this.#noWelcome)));
    this.#store.add(toDisposable(() => clearTimeout(this.#holdTimer)));
    if (this.#o.plain !== undefined) {
      // Read once welcomed (PlainInput.start): the end of a short stdin must not reach the capsule first.
      this.#plainInput = this.#store.add(
        new PlainInput({ stdin: terminal.stdin, send: (bytes) => this.#relay.send({ type: 'Input', bytes }), drained: () => this.#relay.drained() }),
      );
    } else {
      this.#store.add(terminal.onData((chunk) => this.#input.push(chunk)));
      terminal.stdin.resume();
    }
    this.#store.add(
      terminal.onResize((size) => {
        this.#relay.send({ type: 'Resize', rows: size.rows, cols: size.cols });
        if (!this.#modals.redraw()) this.#overlay.redrawSoon();
      }),
    );
    return this.done;
  }

  /**
   * The markers asked of the capsule with HoldReplies and not yet received (extension `held-replies`), in
   * order; a RepliesHeld that is not the next one asked for is ignored.
   */
  readonly #repliesAsked: boolean[] = [];
  /**
   * The capsule answers the program's position and status queries (from its RepliesHeld true to its
   * RepliesHeld false): the output meanwhile is never written, so no query in it reaches the terminal too.
   */
  #capsuleAnswers = false;
  /** The palette waiting for RepliesHeld true to be drawn. */
  #heldReady: (() => void) | null = null;
  #holdTimer: NodeJS.Timeout | undefined;

  /**
   * The palette opens (docs/terminal-policy.md, "Replies"): with `held-replies`, the capsule is asked to answer
   * the program's position and status queries from its screen model, and the palette is drawn (`ready`) once
   * its RepliesHeld marks where that begins: the output before the mark is still written, so each query is
   * answered exactly once, by the terminal before the mark and by the capsule after it.
   */
  #holdReplies(ready: () => void): void {
    if (!hasFeature(this.#negotiated, 'held-replies') || this.#finished) {
      ready();
      return;
    }
    this.#heldReady = ready;
    this.#relay.send({ type: 'HoldReplies', held: true });
    this.#repliesAsked.push(true);
    this.#armHoldTimer(() => {
      // A capsule that does not answer: the palette is drawn all the same, and its output dropped as before.
      this.#o.log?.('the capsule did not mark held replies in time');
      this.#takeHeldReady();
    });
  }

  /** Whether the capsule was last asked to answer the program's queries (or does, asked nothing since). */
  get #repliesHeld(): boolean {
    return this.#repliesAsked.length > 0 ? this.#repliesAsked.at(-1) === true : this.#capsuleAnswers;
  }

  /**
   * A confirmation prompt or a feature's overlay is up, drawn at once: the capsule answers the program's
   * queries from its mark on (the output before the mark and after the box was drawn is held, queries too).
   */
  #holdForUi(): void {
    if (!hasFeature(this.#negotiated, 'held-replies') || this.#finished || this.#repliesHeld) return;
    this.#relay.send({ type: 'HoldReplies', held: true });
    this.#repliesAsked.push(true);
  }

  /**
   * Host UI closed: once none is up, the terminal answers the program's queries again from the capsule's
   * RepliesHeld false on (asked before the repaint, which then comes after the mark).
   */
  /**
   * A modal closed (the palette, a prompt, a feature's overlay): the capsule repaints the program's screen,
   * which kept updating under it, and a notice is drawn again over it.
   */
  #modalClosed(): void {
    this.#releaseReplies();
    this.repaint();
    this.#overlay.redrawSoon();
  }

  #releaseReplies(): void {
    if (this.#modals.anyOpen) return;
    this.#heldReady = null;
    if (!this.#repliesHeld || this.#finished) return;
    this.#relay.send({ type: 'HoldReplies', held: false });
    this.#repliesAsked.push(false);
    this.#armHoldTimer(() => {
      this.#o.log?.('the capsule did not mark the end of held replies in time');
      this.#capsuleAnswers = false;
    });
  }

  #armHoldTimer(fire: () => void): void {
    clearTimeout(this.#holdTimer);
    this.#holdTimer = setTimeout(fire, HOLD_REPLIES_TIMEOUT_MS);
  }

  #takeHeldReady(): void {
    const ready = this.#heldReady;
    this.#heldReady = null;
    ready?.();
  }

  #onRepliesHeld(held: boolean): void {
    if (this.#repliesAsked[0] !== held) {
      this.#o.log?.(`ignored a RepliesHeld ${held} not asked for`);
      return;
    }
    this.#repliesAsked.shift();
    this.#capsuleAnswers = held;
    if (this.#repliesAsked.length === 0) clearTimeout(this.#holdTimer);
    if (held && this.#repliesAsked.length === 0) this.#takeHeldReady();
  }

  /**
   * Whether the program's output is held: while the palette or a confirmation is up, the output only updates
   * the capsule's screen model; closing it repaints from there, so nothing is lost and nothing draws over the
   * host's box. With `held-replies`, from the capsule's mark on (the palette is drawn there) to its mark after.
   */
  get #outputHeld(): boolean {
    return this.#capsuleAnswers || this.#modals.holdsOutput(hasFeature(this.#negotiated, 'held-replies'));
  }

  /** Asks the capsule to resend modes and the full screen (only when negotiated). Returns whether sent. */
  repaint(): boolean {
    if (!hasFeature(this.#negotiated, 'repaint')) return false;
    this.#relay.send({ type: 'Repaint' });
    return true;
  }

  /** Detaches: the program keeps running. */
  detach(): void {
    if (this.#detaching || this.#finished) return;
    this.#detaching = true;
    this.#o.terminal.stdin.pause();
    this.#relay.send({ type: 'AttachControl', requestId: DETACH_REQUEST_ID, context: { v: 1 }, body: { kind: 'Detach' } });
    const timer = setTimeout(() => this.#finish({ kind: 'detached' }), DETACH_REPLY_TIMEOUT_MS);
    this.#store.add(toDisposable(() => clearTimeout(timer)));
  }

  /** Ends the session from outside (a signal); the transport is closed. */
  abort(reason: string): void {
    this.#finish({ kind: 'lost', reason });
  }

  /** A frame the decoder skipped: the stream is still in sync (protocol.md section 5), so say so and go on. */
  #onSkipped(error: ProtocolError): void {
    if (this.#finished) return;
    this.#o.log?.(`skipped a malformed frame from the capsule: ${error.message}`);
    if (error.tag === SERVER_TAGS.Welcome && !this.#welcomed) {
      // A Welcome whose extension block is malformed: talk to it as to an upstream capsule.
      this.#welcomed = true;
      clearTimeout(this.#noWelcome);
      this.#welcomeEmitter.fire({ sessions: 0, features: null });
      this.#input.welcomed();
      this.#plainInput?.start();
      this.notify('warning', `the capsule sent a malformed extension block (${error.code}); extensions disabled`);
    } else if (this.#skippedNotices.tryTake()) {
      this.notify('warning', `skipped a malformed frame from the capsule: ${error.code} ${error.message}`);
    }
  }

  #onServerFrame(f: ServerFrame): void {
    if (this.#finished) return;
    switch (f.type) {
      case 'Output':
        if (this.#outputHeld) return;
        this.#relay.writeOutput(f.bytes);
        this.#overlay.afterOutput();
        return;
      case 'Welcome':
        this.#o.log?.(`welcome: ${f.sessions} session(s), features ${f.features === null ? 'none (upstream capsule)' : JSON.stringify(f.features)}`);
        this.#welcomed = true;
        clearTimeout(this.#noWelcome);
        if (f.features !== null) {
          this.#negotiated = negotiateFeatures(f.features, this.#o.withoutFeatures);
          this.#relay.send({ type: 'ExtHello', features: this.#negotiated });
        }
        this.#welcomeEmitter.fire({ sessions: f.sessions, features: f.features });
        this.#input.welcomed();
        this.#plainInput?.start();
        this.#showHint();
        return;
      case 'Bell':
        if (this.#o.plain === undefined) this.#o.terminal.write(BEL);
        return;
      case 'RepliesHeld':
        this.#onRepliesHeld(f.held);
        return;
      case 'ExitStatus':
        this.#exitStatus = f.status;
        return;
      case 'Notice':
        this.#noticeEmitter.fire({ level: f.level, text: f.text });
        this.containerNotice(f.level, f.text);
        return;
      case 'Shutdown':
        this.#o.log?.(`shutdown${f.reason === null ? '' : `: ${f.reason}`}`);
        this.#finish(this.#endOutcome(f.reason));
        return;
      case 'AttachControlResponse':
        this.#o.log?.(`attach-control response ${f.requestId}: ${f.result}`);
        // Features that sent a request (image paste) wait for its answer.
        this.#frameEmitter.fire(f);
        return;
      default:
        // Every other frame is an affordance's (host requests, answers to their requests): passed on
        // to them unnamed; `passOn` keeps the union exhaustive.
        this.#passOn(f);
        return;
    }
  }

  /** The keys hint on screen (or queued), until the first key or its time. */
  #hint: string | null = null;

  /**
   * The keys hint, once, with our capsule only: it repaints the program's screen over a notice that goes
   * early, which an upstream capsule cannot (the hint would stay until the program drew over it).
   */
  #showHint(): void {
    const text = this.#o.keysHint;
    if (text == null || this.#o.plain !== undefined || !this.drawsOverlay || this.#hintPosted) return;
    this.#hintPosted = true;
    this.#hint = text;
    this.#overlay.post('info', text, 'host');
  }
  #hintPosted = false;

  #withdrawHint(): void {
    if (this.#hint === null) return;
    this.#overlay.withdraw(this.#hint);
    this.#hint = null;
  }

  /** Passes a frame the session does not handle itself to the affordances (FeatureSession.onFrame). */
  #passOn(f: PassedOnFrame): void {
    if (!this.#frameEmitter.hasListeners) this.#o.log?.(`ignored ${f.type} frame (not handled by this host)`);
    this.#frameEmitter.fire(f);
  }

  /** How the session ends when the capsule says so (Shutdown, or a clean close). */
  #endOutcome(reason: string | null): AttachOutcome {
    if (this.#exitStatus !== null) return { kind: 'exited', status: this.#exitStatus, reason };
    if (this.#detaching) return { kind: 'detached' };
    return { kind: 'shutdown', reason };
  }

  #onServerEnd(): void {
    if (this.#finished) return;
    if (this.#exitStatus !== null || this.#detaching) this.#finish(this.#endOutcome(null));
    // Before the capsule said anything, the carrier failed to reach it (its own account follows), rather
    // than a capsule that closed a session.
    else void this.#lose(this.#welcomed ? 'the capsule closed the connection' : 'the connection closed before the capsule answered');
  }

  async #lose(reason: string): Promise<void> {
    if (this.#finished) return;
    if (this.#detaching) {
      this.#finish({ kind: 'detached' });
      return;
    }
    if (this.#exitStatus !== null) {
      this.#finish({ kind: 'exited', status: this.#exitStatus });
      return;
    }
    // Stop taking input now; ask the carrier (a relay) for its own account of what happened.
    this.#o.terminal.stdin.pause();
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), FAILURE_DETAIL_TIMEOUT_MS).unref());
    const detail = await Promise.race([this.#o.transport.failureDetail(), timeout]);
    this.#finish({ kind: 'lost', reason: detail === null ? reason : `${reason} (${detail})` });
  }

  #finish(outcome: AttachOutcome): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#o.terminal.stdin.pause();
    // The affordances first, newest first (they are built on the parts), then the session's timers,
    // listeners and parts; the relay closes the transport.
    this.#installed.dispose();
    this.#store.dispose();
    this.#resolveDone(outcome);
  }
}
