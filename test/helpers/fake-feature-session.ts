/**
 * A FeatureSession for unit tests of host features: records notices, palette actions, input hooks, sent
 * frames, typed input and terminal writes; `emitFrame` plays a server frame to the feature.
 */
import { Emitter, toDisposable, type Disposable } from '../../src/disposable.ts';
import type { ClientFrame, Features, NoticeLevel, ServerFrame } from '../../src/protocol/index.ts';
import type { ConfirmRequest } from '../../src/host/session/confirm-prompt.ts';
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
  ShownTarget,
  TargetEntry,
} from '../../src/host/session/feature-session.ts';
import { SessionGestures, type HostRequestKind } from '../../src/host/session/gesture-gate.ts';
import { UrlOpenHooks, type UrlOpenHook, type UrlOpenStep } from '../../src/host/session/url-open-hooks.ts';
import type { FilterEvent } from '../../src/host/terminal/terminal-filter/context.ts';
import { initialProgramModes, type HostNeeds } from '../../src/host/terminal/terminal-filter/modes.ts';

export class FakeFeatureSession implements FeatureSession {
  readonly done = new Promise<never>(() => {});
  readonly frameEmitter = new Emitter<ServerFrame>();
  readonly gestureEmitter = new Emitter<Gesture>();
  readonly onFrame = this.frameEmitter.event;
  readonly onGesture = this.gestureEmitter.event;
  readonly paletteOpenEmitter = new Emitter<PaletteOpening>();
  readonly onPaletteOpen = this.paletteOpenEmitter.event;
  /** The palette's opening in progress (closed by the next one, or by `closePalette`). */
  opening: { current: boolean } = { current: false };
  /** What each entry with a target shows in the current opening, as `showTarget` gave it. */
  readonly targets = new Map<string, TargetEntry>();
  /** The host action log entries, in order. */
  readonly log: HostActionRecord[] = [];
  /** Confirmations asked for, and the answer the operator gives (default yes). */
  readonly confirms: ConfirmRequest[] = [];
  confirmAnswer = true;
  /** `--allow-upstream-requests`. */
  allowUpstream = false;
  gate = new SessionGestures();
  readonly terminalEmitter = new Emitter<FilterEvent>();
  readonly onTerminalEvent = this.terminalEmitter.event;
  /** The program's modes as the host's filter would have read them; tests change them directly. */
  readonly programModes = initialProgramModes();
  /** Every setHostNeeds call, in order. */
  readonly hostNeeds: Array<Partial<HostNeeds>> = [];
  readonly notices: Array<{ level: NoticeLevel; text: string }> = [];
  readonly gestures: Gesture[] = [];
  readonly actions = new Map<string, SessionAction>();
  readonly hooks = new Map<InputHookKind, InputHook>();
  readonly sent: ClientFrame[] = [];
  readonly written: string[] = [];
  /** Everything that reached the program, in order: typed bytes, and held bytes once released. */
  readonly program: Buffer[] = [];
  held: Buffer[] | null = null;
  holds = 0;

  features: Features | null;

  constructor(features: Features | null) {
    this.features = features;
  }

  readonly urlOpenHooks = new UrlOpenHooks();
  addUrlOpenHook(hook: UrlOpenHook): Disposable {
    return this.urlOpenHooks.add(hook);
  }
  urlOpenSteps(href: string): UrlOpenStep[] {
    return this.urlOpenHooks.steps(href);
  }

  emitFrame(f: ServerFrame): void {
    this.frameEmitter.fire(f);
  }
  readonly welcomeEmitter = new Emitter<{ sessions: number; features: Features | null }>();
  readonly onWelcome = this.welcomeEmitter.event;
  /** Plays the capsule's Welcome to the features. */
  welcome(): void {
    this.welcomeEmitter.fire({ sessions: 1, features: this.features });
  }
  gesture(g: Gesture): void {
    this.gestures.push(g);
    this.gate.record(g);
    this.gestureEmitter.fire(g);
  }
  registerAction(action: SessionAction): Disposable {
    this.actions.set(action.id, action);
    return toDisposable(() => this.actions.delete(action.id));
  }
  addInputHook(kind: InputHookKind, hook: InputHook): Disposable {
    this.hooks.set(kind, hook);
    return toDisposable(() => this.hooks.delete(kind));
  }
  /** The input taps features added (the terminal clipboard's), first added first. */
  readonly inputTaps: InputTap[] = [];
  addInputTap(tap: InputTap): Disposable {
    this.inputTaps.push(tap);
    return toDisposable(() => this.inputTaps.splice(this.inputTaps.indexOf(tap), 1));
  }
  holdInput(): Disposable {
    this.holds++;
    this.held ??= [];
    return toDisposable(() => {
      if (--this.holds > 0) return;
      const h = this.held ?? [];
      this.held = null;
      this.program.push(...h);
    });
  }
  notify(level: NoticeLevel, text: string): void {
    this.notices.push({ level, text });
  }
  /** containerNotice calls, with the `capsule:` mark the session adds. */
  readonly containerNotices: Array<{ level: NoticeLevel; text: string }> = [];
  containerNotice(level: NoticeLevel, text: string): void {
    this.containerNotices.push({ level, text: `capsule: ${text}` });
  }
  logAction(record: HostActionRecord): void {
    this.log.push(record);
  }
  admitUpstream(kind: HostRequestKind, action: string, target: string): boolean {
    const ok = this.allowUpstream && this.gate.consume(kind);
    if (!ok) {
      this.notify('warning', `Refused a request from the capsule (${action} ${target})`);
      this.logAction({ action, target, result: 'refused' });
    }
    return ok;
  }
  confirm(request: ConfirmRequest): Promise<boolean> {
    this.confirms.push(request);
    return Promise.resolve(this.confirmAnswer);
  }
  /** Opens the palette: entries with a target start pending, and the features read their targets. */
  openPalette(): PaletteOpening {
    this.opening.current = false;
    this.opening = { current: true };
    this.targets.clear();
    for (const [id, a] of this.actions) if (a.readsTarget !== undefined) this.actions.set(id, { ...a, title: a.readsTarget.pendingTitle });
    this.paletteOpenEmitter.fire(this.opening);
    return this.opening;
  }
  closePalette(): void {
    this.opening.current = false;
  }
  showTarget(id: string, opening: PaletteOpening, entry: TargetEntry): void {
    const a = this.actions.get(id);
    if (opening !== this.opening || !opening.current || a?.readsTarget === undefined) return;
    this.targets.set(id, entry);
    this.actions.set(id, { ...a, title: `${entry.title}${entry.suffix ?? ''}` });
  }
  /**
   * Chooses an entry the way the palette does: a pending one (no target shown yet) runs nothing and gives
   * the palette's line; else the palette closes and the action runs with what its entry showed. `seen`:
   * the title fit the palette (default true).
   */
  async choose(id: string, seen = true): Promise<string | undefined> {
    const a = this.actions.get(id);
    if (a === undefined) throw new Error(`no action ${id}`);
    if (a.readsTarget === undefined) {
      await a.run();
      return undefined;
    }
    const t = this.opening.current ? this.targets.get(id) : undefined;
    if (this.opening.current && t === undefined) return a.readsTarget.whilePending();
    this.opening.current = false;
    const shown: ShownTarget = t === undefined ? { target: null, seen: false } : { target: t.target, seen: t.literal && seen };
    await a.run(undefined, shown);
    return undefined;
  }
  retitleAction(id: string, title: string): void {
    const a = this.actions.get(id);
    if (a !== undefined) this.actions.set(id, { ...a, title });
  }
  sendFrame(f: ClientFrame): boolean {
    this.sent.push(f);
    return true;
  }
  sendInput(bytes: Buffer): void {
    this.program.push(bytes);
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  setHostNeeds(needs: Partial<HostNeeds>): void {
    this.hostNeeds.push(needs);
  }
  writeTerminal(bytes: Buffer): void {
    this.written.push(bytes.toString('latin1'));
  }
  /** The overlay a feature shows (link hints), while it is up, and what it drew each time. */
  overlay: FeatureOverlay | null = null;
  readonly overlayDraws: string[] = [];
  terminalSize = { rows: 24, cols: 80 };
  /** Output taps (features that check the screen); `output` plays program output to them. */
  readonly taps = new Set<(bytes: Buffer) => void>();
  tapOutput(listener: (bytes: Buffer) => void): Disposable {
    this.taps.add(listener);
    return toDisposable(() => this.taps.delete(listener));
  }
  output(bytes: Buffer | string): void {
    for (const t of [...this.taps]) t(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'utf8'));
  }
  /** Repaint requests; `onRepaint` answers one (a test plays the repaint's output). */
  repaints = 0;
  onRepaint: (() => void) | null = null;
  repaint(): boolean {
    this.repaints += 1;
    const answer = this.onRepaint;
    if (answer !== null) queueMicrotask(answer);
    return this.features?.['repaint'] !== undefined;
  }
  showOverlay(overlay: FeatureOverlay): Disposable {
    this.overlay = overlay;
    this.overlayDraws.push(overlay.draw(this.terminalSize));
    return toDisposable(() => {
      if (this.overlay === overlay) this.overlay = null;
    });
  }
  programTitle: string | null = null;
  /** Every routeNotifications call, in order. */
  readonly routes: Array<{ terminal: boolean; bell: boolean }> = [];
  routeNotifications(route: { terminal: boolean; bell: boolean }): void {
    this.routes.push(route);
  }
  terminalFocused: boolean | null = null;
  readonly focusEmitter = new Emitter<boolean>();
  readonly onFocusChange = this.focusEmitter.event;
  /** The operator's terminal reports focus in or out. */
  focus(focused: boolean): void {
    this.terminalFocused = focused;
    this.focusEmitter.fire(focused);
  }
  /** The operator types: held while a paste runs. */
  type(bytes: string): void {
    if (this.held !== null) this.held.push(Buffer.from(bytes));
    else this.program.push(Buffer.from(bytes));
  }
}
