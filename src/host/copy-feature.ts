/**
 * Copy offers (docs/terminal-policy.md, "Copy offers"): a program's OSC 52 write, or `jackin-capsule copy`,
 * never reaches the operator's clipboard by itself. The host's terminal filter turns it into an offer; this
 * feature shows a notice with its size and an inert one-line preview, and the palette action **Copy offered
 * text** (key `c`; its entry shows the offer's size and preview) puts exactly the offer its entry showed
 * (control characters but tab, LF and CR removed) on the host clipboard. JACKIN_COPY: `ask` (default) waits for that gesture, `allow` copies at once with a notice,
 * `deny` ignores offers. A program's clipboard query is answered with nothing, and the operator is told once.
 */
import { DisposableStore, type Disposable } from '../disposable.ts';
import { JackinError } from '../errors.ts';
import { formatBytes } from '../ui/format-bytes.ts';
import { inertText, textWidth } from '../ui/inert-text.ts';
import { selectTextWriter, type ClipboardTextWriter } from './clipboard/write-text.ts';
import type { FeatureSession } from './feature-session.ts';
import { PALETTE_MAX_TITLE_COLUMNS } from './palette.ts';
import { createRateLimiter } from './rate-limiter.ts';
import type { FilterEvent } from './terminal-filter/context.ts';

export const COPY_MODES = ['ask', 'allow', 'deny'] as const;
export type CopyMode = (typeof COPY_MODES)[number];
/** Columns of the preview in the notice. */
const PREVIEW_COLUMNS = 40;

/** JACKIN_COPY (any case; unset or empty: ask). Throws E_BAD_COPY_MODE for anything else. */
export function copyModeFromEnv(env: Readonly<Record<string, string | undefined>>): CopyMode {
  const v = (env['JACKIN_COPY'] ?? '').trim().toLowerCase();
  if (v === '') return 'ask';
  const mode = COPY_MODES.find((m) => m === v);
  if (mode === undefined) throw new JackinError('E_BAD_COPY_MODE', `JACKIN_COPY=${JSON.stringify(env['JACKIN_COPY'])} is not one of ${COPY_MODES.join(', ')}`);
  return mode;
}

/** One line that shows what an offer holds without acting on the terminal: whitespace folded, controls escaped, cut. */
export function offerPreview(text: string, columns: number = PREVIEW_COLUMNS): string {
  return inertText(text.replace(/[\t\r\n ]+/g, ' ').trim(), columns);
}

const COPY_TITLE = 'Copy offered text';

/** The palette entry for an offer: its size and as much of its inert preview as fits the entry. */
export function paletteTitle(o: { text: string; bytes: number }): string {
  const head = `${COPY_TITLE} ${formatBytes(o.bytes)} "`;
  return `${head}${offerPreview(o.text, Math.max(8, PALETTE_MAX_TITLE_COLUMNS - textWidth(head) - 1))}"`;
}

export interface CopyFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  /** The clipboard writer (default: the platform's, or OSC 52 to the operator's terminal). */
  writer?: ClipboardTextWriter;
}

export interface CopyFeature extends Disposable {
  /** Puts the offer the palette entry showed on the host clipboard (the palette action), once per palette opening. */
  copyOffered(): Promise<void>;
}

type Offer = Extract<FilterEvent, { type: 'copy-offer' }>;

export function installCopyFeature(session: FeatureSession, options: CopyFeatureOptions = {}): CopyFeature {
  const store = new DisposableStore();
  const env = options.env ?? process.env;
  const mode = copyModeFromEnv(env);
  let writer = options.writer;
  let offer: Offer | null = null;
  let queryTold = false;
  const refusals = createRateLimiter({ max: 3, windowMs: 10_000 });

  const describe = (o: Offer): string =>
    `${formatBytes(o.bytes)} "${offerPreview(o.text)}"${o.removed > 0 ? ` (${o.removed} control character${o.removed === 1 ? '' : 's'} removed)` : ''}`;

  const copy = async (o: Offer): Promise<void> => {
    writer ??= selectTextWriter(env as NodeJS.ProcessEnv, (b) => session.writeTerminal(b));
    try {
      await writer.write(o.text);
      session.notify('success', `Copied ${describe(o)} to the clipboard (${writer.name})`);
    } catch (e) {
      session.notify('error', `Could not copy the offered text: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  /**
   * The offer the palette entry showed when the palette opened: choosing the entry copies exactly that one.
   * A notice can still be on screen for an earlier offer when a newer one replaced it, so the operator
   * decides on what the entry shows, and an offer made after that never rides on the choice.
   */
  let shown: Offer | null = null;
  store.add(
    session.onPaletteOpen(() => {
      shown = mode === 'deny' ? null : offer;
      session.retitleAction('copy-offered-text', shown === null ? COPY_TITLE : paletteTitle(shown));
    }),
  );

  const copyOffered = async (): Promise<void> => {
    const chosen = shown;
    shown = null;
    if (chosen === null) {
      session.notify('info', 'No text has been offered (a program offers text with OSC 52, or inside the session: jackin-capsule copy)');
      return;
    }
    await copy(chosen);
  };

  store.add(
    session.onTerminalEvent((e) => {
      switch (e.type) {
        case 'copy-offer':
          if (mode === 'deny') return;
          offer = e;
          if (mode === 'allow') void copy(e);
          else session.notify('info', `Copy offer: ${describe(e)}; copy it with the palette: Copy offered text (c)`);
          return;
        case 'copy-refused':
          if (mode !== 'deny' && refusals.tryTake()) session.notify('warning', `Copy offer refused: ${e.reason}`);
          return;
        case 'clipboard-query':
          if (!queryTold) session.notify('warning', 'The program asked to read your clipboard; it got nothing');
          queryTold = true;
          return;
        default:
          return;
      }
    }),
  );
  store.add(session.registerAction({ id: 'copy-offered-text', title: COPY_TITLE, key: 'c', run: () => copyOffered() }));

  return { copyOffered, dispose: () => store.dispose() };
}
