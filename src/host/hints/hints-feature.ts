/**
 * Link hints (issue 37), wired into an attach session: the palette's **Open link on screen** (o) and **Copy
 * link on screen** (y) ask our capsule for the links its screen model shows (extension `link-list`), check
 * every one again (hint-labels.ts: positions on the host's own screen, the URL check, one per cell, capped),
 * draw a label of one or two letters over each link's first cells, and take the keyboard: typing a label
 * chooses that link, Esc leaves. A letter typed in the first CONFIRM_ARM_MS after the labels appear chooses
 * nothing (it is dropped): the capsule picks when its list arrives, and could pick the moment the operator
 * types a word for the program, whose next letters would choose a label nobody saw. Either way the overlay goes and the capsule repaints, so the screen is as
 * before. This works whether or not the program tracks the mouse: no click is involved.
 *
 * The chosen target came from the capsule, which is untrusted: opening goes through the same checks and the
 * same host prompt showing the exact target as a click (session/open-url.ts); copying puts the checked
 * target on the host clipboard through the platform's text writer, with a notice and a log entry.
 */
import { performance } from 'node:perf_hooks';
import { DisposableStore, type Disposable } from '../../disposable.ts';
import { CONFIRM_ARM_MS } from '../session/confirm-controller.ts';
import { cutColumns } from '../../ui/inert-text.ts';
import { redactUrlForLog } from '../../policy/url-safety.ts';
import { selectTextWriter, type ClipboardTextWriter } from '../platform/clipboard/write-text.ts';
import { createOpener, type Opener } from '../platform/opener.ts';
import type { FeatureSession } from '../session/feature-session.ts';
import { openUrlChecked } from '../session/open-url.ts';
import { requestLinkList } from '../session/resolver.ts';
import { decodeKeys } from '../terminal/keys.ts';
import type { InputEvent } from '../terminal/input-scan.ts';
import { buildHints, hintKey, renderHints, type Hint } from './hint-labels.ts';

export interface HintsFeatureOptions {
  env?: Readonly<Record<string, string | undefined>>;
  opener?: Opener;
  /** The host clipboard's text writer (default: the platform's, chosen on first use). */
  writer?: ClipboardTextWriter;
  extraSchemes?: readonly string[];
  listTimeoutMs?: number;
  /** Diagnostics (--verbose). */
  log?: (line: string) => void;
  /** Monotonic clock in milliseconds; injected by tests. */
  now?: () => number;
}

export type HintAction = 'open' | 'copy';

export interface HintsFeature extends Disposable {
  /** Lists the links on the screen and shows their labels; resolves once the operator chose one or left. */
  showHints(action: HintAction): Promise<void>;
}

export function installHintsFeature(session: FeatureSession, options: HintsFeatureOptions = {}): HintsFeature {
  const store = new DisposableStore();
  const env = options.env ?? process.env;
  const extra = options.extraSchemes === undefined ? {} : { extraSchemes: options.extraSchemes };
  const opener = options.opener ?? createOpener({ env, ...extra });
  let writer = options.writer;
  const now = options.now ?? (() => performance.now());

  /** Shows the labels and waits for the operator: the chosen hint, or null on Esc. */
  const choose = (hints: readonly Hint[], action: HintAction, listedAt: { rows: number; cols: number }): Promise<Hint | null> =>
    new Promise((resolve) => {
      let typed = '';
      let shown: Disposable | null = null;
      let shownAt = Infinity;
      const finish = (hint: Hint | null): void => {
        shown?.dispose();
        shown = null;
        resolve(hint);
      };
      const handle = (ev: InputEvent): void => {
        let keys: Array<Parameters<typeof hintKey>[2]>;
        if (ev.type === 'palette-key') keys = ['palette'];
        else if (ev.type === 'bytes') keys = decodeKeys(ev.bytes);
        else return; // pastes, clicks and paste-key presses do nothing while the labels are up
        // Typed before the operator could have read the labels: meant for the program, never a choice.
        const early = now() - shownAt < CONFIRM_ARM_MS;
        for (const key of keys) {
          const r = hintKey(hints, typed, key);
          if (early && r.type !== 'cancel') continue;
          if (r.type === 'cancel') return finish(null);
          if (r.type === 'chosen') return finish(r.hint);
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
      // A session that ends with the labels up ends this too.
      void session.done.then(() => finish(null), () => finish(null));
    });

  const copy = async (hint: Hint): Promise<void> => {
    const target = hint.checked.href;
    writer ??= selectTextWriter(env as NodeJS.ProcessEnv, (b) => session.writeTerminal(b));
    try {
      await writer.write(target);
      session.notify('success', `Copied ${hint.checked.display} to the clipboard (${writer.name})`);
      session.logAction({ action: 'copy-link', target: redactUrlForLog(target), result: 'ok', detail: hint.source === 'osc8' ? 'hyperlink target' : 'link on screen' });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      session.notify('error', `Could not copy the link: ${message}`);
      session.logAction({ action: 'copy-link', target: redactUrlForLog(target), result: 'failed', detail: message });
    }
  };

  const showHints = async (action: HintAction): Promise<void> => {
    const listed = await requestLinkList(session, options.listTimeoutMs);
    if (listed === null) {
      session.notify('info', 'This capsule cannot list the links on the screen; update jackin-capsule in the container');
      return;
    }
    const screen = session.terminalSize;
    const { hints, dropped } = buildHints(listed, screen, options.extraSchemes ?? []);
    options.log?.(`link hints: ${hints.length} labelled of ${listed.length} listed (${JSON.stringify(dropped)})`);
    if (hints.length === 0) {
      session.notify('info', dropped.refused > 0 ? `No link on the screen that jackin would open (${dropped.refused} refused)` : 'No links on the screen');
      return;
    }
    const hint = await choose(hints, action, screen);
    if (hint === null) return;
    if (action === 'copy') await copy(hint);
    // The capsule chose these targets: the host's prompt shows the exact one before anything opens.
    else await openUrlChecked(session, { env, opener, ...extra }, hint.checked.href, hint.source, true);
  };

  store.add(session.registerAction({ id: 'open-link-on-screen', title: 'Open link on screen', key: 'o', run: () => showHints('open') }));
  store.add(session.registerAction({ id: 'copy-link-on-screen', title: 'Copy link on screen', key: 'y', run: () => showHints('copy') }));
  return { showHints, dispose: () => store.dispose() };
}
