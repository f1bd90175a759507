/**
 * Copy offers (docs/terminal-policy.md, "Copy offers"): a program's OSC 52 write, or `jackin-capsule copy`,
 * never reaches the operator's clipboard by itself. The host's terminal filter turns it into an offer; this
 * feature shows a notice with its size and an inert one-line preview, and the palette action **Copy offered
 * text** (key `c`) puts exactly the offered text (control characters but tab, LF and CR removed) on the host
 * clipboard. JACKIN_COPY: `ask` (default) waits for that gesture, `allow` copies at once with a notice
 * (a flood: three notices, then one summary per 10 s), `deny` ignores offers. A program's clipboard query
 * is answered with nothing, and the operator is told once.
 */
import { nodeCrypto } from '../../lazy-builtins.ts';
import { DisposableStore, toDisposable, type Disposable } from '../../disposable.ts';
import { JackinError } from '../../errors.ts';
import { isOffWord } from '../../policy/env-switch.ts';
import { formatBytes } from '../../ui/format-bytes.ts';
import { inertText, textWidth } from '../../ui/inert-text.ts';
import type { ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import { createHostServices, type HostServices } from '../platform/host-services.ts';
import type { SessionNotices, SessionPalette, SessionScreen, SessionTerminal } from '../session/feature-session.ts';
import { PALETTE_MAX_TITLE_COLUMNS } from '../session/palette.ts';
import { createRateLimiter } from '../platform/rate-limiter.ts';
import type { FilterEvent } from '../terminal/terminal-filter/context.ts';

export const COPY_MODES = ['ask', 'allow', 'deny'] as const;
export type CopyMode = (typeof COPY_MODES)[number];
/** Columns of the preview in the notice. */
const PREVIEW_COLUMNS = 40;
/** At most 3 offer notices in this window; with JACKIN_COPY=allow, the summary of the rest comes this long after. */
const NOTICE_WINDOW_MS = 10_000;
/**
 * The same text offered again this soon is the same copy: an agent that writes OSC 52 and also runs a
 * clipboard tool (OpenCode in a container, where jackin's `xclip` shim makes an offer too) copies once.
 */
const SAME_OFFER_MS = 2_000;

/** JACKIN_COPY (any case; unset or empty: ask; an off-word: deny). Throws E_BAD_COPY_MODE for anything else. */
export function copyModeFromEnv(env: Readonly<Record<string, string | undefined>>): CopyMode {
  const v = (env['JACKIN_COPY'] ?? '').trim().toLowerCase();
  if (v === '') return 'ask';
  if (isOffWord(v)) return 'deny';
  const mode = COPY_MODES.find((m) => m === v);
  if (mode === undefined) throw new JackinError('E_BAD_COPY_MODE', `JACKIN_COPY=${JSON.stringify(env['JACKIN_COPY'])} is not one of ${COPY_MODES.join(', ')}`);
  return mode;
}

/** One line that shows what an offer holds without acting on the terminal: whitespace folded, controls escaped, cut. */
export function offerPreview(text: string, columns: number = PREVIEW_COLUMNS): string {
  return inertText(text.replace(/[\t\r\n ]+/g, ' ').trim(), columns);
}

const COPY_TITLE = 'Copy offered text';

/**
 * The palette entry for an offer: its size and as much of its inert preview as fits the entry, so the
 * palette never cuts the entry short of its closing quote.
 */
export function paletteTitle(o: { text: string; bytes: number }): string {
  const head = `${COPY_TITLE} ${formatBytes(o.bytes)} "`;
  return `${head}${offerPreview(o.text, Math.max(8, PALETTE_MAX_TITLE_COLUMNS - textWidth(head) - 1))}"`;
}

export interface CopyFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** The session's platform services (default: the feature's own, from `env`). */
  services?: HostServices;
  /** The clipboard writer (default: the services' one: the platform's, or OSC 52 to the operator's terminal). */
  writer?: ClipboardTextWriter;
  /** How long after an untold copy the summary comes (default 10 s); injected by tests. */
  summaryMs?: number;
  /** The clock (default Date.now); injected by tests. */
  now?: () => number;
}

/** What `jackin log` records of a copy: the text's size and the start of its SHA-256, never the text. */
export function copyLogTarget(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return `text of ${bytes.length} bytes, sha256 ${nodeCrypto().createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
}

type Offer = Extract<FilterEvent, { type: 'copy-offer' }>;

/** What the copy feature uses of the session (the screen: the clipboard's OSC 52 fallback writes to it). */
export type CopySession = SessionNotices & SessionPalette & Pick<SessionScreen, 'writeTerminal'> & Pick<SessionTerminal, 'onTerminalEvent'>;

/** An offer as its notices tell it: size, inert preview, and how many control characters were removed. */
function describeOffer(o: Offer): string {
  return `${formatBytes(o.bytes)} "${offerPreview(o.text)}"${o.removed > 0 ? ` (${o.removed} control character${o.removed === 1 ? '' : 's'} removed)` : ''}`;
}

/** The copy affordance of one attached session; installCopyFeature() makes it. */
export class CopyFeature implements Disposable {
  readonly #session: CopySession;
  readonly #store = new DisposableStore();
  readonly #services: HostServices;
  readonly #mode: CopyMode;
  #writer: ClipboardTextWriter | undefined;
  #offer: Offer | null = null;
  readonly #now: () => number;
  #offerAt = -Infinity;
  #queryTold = false;
  readonly #refusals = createRateLimiter({ max: 3, windowMs: 10_000 });
  // Offers are recorded whatever their rate, but told at most this often: a program flooding offers would
  // otherwise fill the notice queue and push the host's own notices out of it. The palette entry shows the
  // latest offer, told or not.
  readonly #offerNotices = createRateLimiter({ max: 3, windowMs: NOTICE_WINDOW_MS });

  // JACKIN_COPY=allow: offers over the notice rate, and offers replaced by a newer one before they were
  // written, get no notice of their own; one summary per window tells how many there were and what the
  // clipboard holds now, so the operator always learns that a program changed it.
  readonly #summaryMs: number;
  #untold = 0;
  #last: { offer: Offer; error: string | null } | null = null;
  #summary: NodeJS.Timeout | null = null;
  // Due while a write is in flight: the summary waits for it, so it names what the clipboard ends up with
  // (told at once, it named the offer before the one being written).
  #summaryDue = false;

  // One clipboard write at a time (each may start a process), the latest offer written last; offers that
  // arrive meanwhile are coalesced, so a flood of them is a few writes, not a process each.
  #copying = false;
  #nextCopy: Offer | null = null;

  /**
   * The offer the palette entry showed when the palette opened: choosing the entry copies that one, not one
   * that replaced it after the operator read its notice (the program's output, offers included, is held
   * while the palette is up, so the entry stays true while it can be chosen).
   */
  #shown: Offer | null = null;

  constructor(session: CopySession, options: CopyFeatureOptions) {
    this.#session = session;
    const env = options.env ?? options.services?.env ?? process.env;
    this.#services = options.services ?? createHostServices({ env: env as NodeJS.ProcessEnv, writeTerminal: (b) => session.writeTerminal(b) });
    this.#mode = copyModeFromEnv(env);
    this.#writer = options.writer;
    this.#now = options.now ?? Date.now;
    this.#summaryMs = options.summaryMs ?? NOTICE_WINDOW_MS;
    const store = this.#store;
    store.add(toDisposable(() => (this.#summary !== null ? clearTimeout(this.#summary) : undefined)));
    store.add(
      session.onPaletteOpen(() => {
        this.#shown = this.#offer;
        session.retitleAction('copy-offered-text', this.#shown === null ? COPY_TITLE : paletteTitle(this.#shown));
      }),
    );
    store.add(session.onTerminalEvent((e) => this.#onTerminalEvent(e)));
    store.add(session.registerAction({ id: 'copy-offered-text', title: COPY_TITLE, key: 'c', run: () => this.copyOffered() }));
  }

  /** Puts the offer the palette entry showed on the host clipboard (the palette action), once per palette opening. */
  async copyOffered(): Promise<void> {
    // One choice, one copy: the entry is used up by running it, until the palette opens again.
    const chosen = this.#shown;
    this.#shown = null;
    if (chosen === null) {
      this.#session.notify('info', 'No text has been offered (a program offers text with OSC 52, or inside the session: jackin-capsule copy)');
      return;
    }
    await this.#copy(chosen);
  }

  dispose(): void {
    this.#store.dispose();
  }

  /** Writes one offer; tells the outcome unless `tell` is false; returns the error message, or null. */
  async #copy(o: Offer, tell = true): Promise<string | null> {
    const session = this.#session;
    this.#writer ??= this.#services.textWriter;
    const writer = this.#writer;
    // The host's log names what was copied by size and hash, never the text (it may be a secret).
    const target = copyLogTarget(o.text);
    try {
      await writer.write(o.text);
      session.logAction({
        action: 'copy',
        target,
        result: 'ok',
        detail: `to the clipboard (${writer.name}${this.#mode === 'allow' ? ', JACKIN_COPY=allow' : ''})`,
      });
      if (tell) session.notify('success', `Copied ${describeOffer(o)} to the clipboard (${writer.name})`);
      return null;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.logAction({ action: 'copy', target, result: 'failed', detail: message });
      if (tell) session.notify('error', `Could not copy the offered text: ${message}`);
      return message;
    }
  }

  #tellSummary(): void {
    const n = this.#untold;
    this.#untold = 0;
    const last = this.#last;
    if (n === 0 || last === null) return;
    const now = last.error === null ? `the clipboard holds the latest, ${describeOffer(last.offer)}` : `the latest could not be copied: ${last.error}`;
    this.#session.notify('warning', `The program offered text ${n} more time${n === 1 ? '' : 's'} (JACKIN_COPY=allow); ${now}`);
  }

  #tellLater(): void {
    this.#untold += 1;
    if (this.#summary !== null) return;
    this.#summary = setTimeout(() => {
      this.#summary = null;
      if (this.#copying) this.#summaryDue = true;
      else this.#tellSummary();
    }, this.#summaryMs);
    this.#summary.unref();
  }

  #copySoon(o: Offer): void {
    if (this.#nextCopy !== null) this.#tellLater(); // replaced before it was written
    this.#nextCopy = o;
    if (this.#copying) return;
    this.#copying = true;
    void (async () => {
      let n: Offer | null = this.#nextCopy;
      while (n !== null) {
        this.#nextCopy = null;
        const tell = this.#offerNotices.tryTake();
        const error = await this.#copy(n, tell);
        this.#last = { offer: n, error };
        if (!tell) this.#tellLater();
        n = this.#nextCopy as Offer | null; // set again by offers that arrived during the write
      }
      this.#copying = false;
      if (this.#summaryDue && !this.#store.isDisposed) {
        this.#summaryDue = false;
        this.#tellSummary();
      }
    })();
  }

  #onTerminalEvent(e: FilterEvent): void {
    const session = this.#session;
    switch (e.type) {
      case 'copy-offer': {
        if (this.#mode === 'deny') return;
        const at = this.#now();
        // One copy, one offer: the same text again within SAME_OFFER_MS is neither told nor copied again.
        const same = this.#offer !== null && this.#offer.text === e.text && at - this.#offerAt < SAME_OFFER_MS;
        this.#offer = e;
        this.#offerAt = at;
        if (same) return;
        if (this.#mode === 'allow') this.#copySoon(e);
        else if (this.#offerNotices.tryTake()) session.notify('info', `Copy offer: ${describeOffer(e)}; copy it with the palette: Copy offered text (c)`);
        return;
      }
      case 'copy-refused':
        // Told and logged at the same rate: a program flooding bad offers fills neither the notices nor the log.
        // Under JACKIN_COPY=deny offers are ignored, good or bad, as the operator asked: neither told nor logged.
        if (this.#mode === 'deny' || !this.#refusals.tryTake()) return;
        session.notify('warning', `Copy offer refused: ${e.reason}`);
        session.logAction({ action: 'copy', target: 'a copy offer of the program', result: 'refused', detail: e.reason });
        return;
      case 'clipboard-query':
        if (!this.#queryTold) {
          session.notify('warning', 'The program asked to read your clipboard; it got nothing');
          session.logAction({
            action: 'read-clipboard',
            target: 'a clipboard query of the program',
            result: 'refused',
            detail: 'programs never read the host clipboard (told once a session)',
          });
        }
        this.#queryTold = true;
        return;
      default:
        return;
    }
  }
}

export function installCopyFeature(session: CopySession, options: CopyFeatureOptions = {}): CopyFeature {
  return new CopyFeature(session, options);
}
