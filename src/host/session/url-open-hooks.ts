/**
 * What features do before a link opens on the host on an operator's gesture (click, palette, offered
 * link): a hook looks at the checked URL and may return a step, with a line for the host's confirm prompt,
 * that runs once the operator confirmed and before the browser opens. The login forward (host/forward/)
 * binds a callback port this way, an offered port's forward has a link to it open through the host port
 * it forwards from; the links affordance asks the hooks without knowing who they are.
 */
import { toDisposable, type Disposable } from '../../disposable.ts';

export interface UrlOpenStep {
  /** A line for the confirm prompt ("and forward localhost:PORT to NAME"); none when there is nothing to ask. */
  readonly note?: string;
  /**
   * A few words for a palette entry that would open the link ("forwards port 7803"): an offered link's entry
   * says what choosing it does besides opening, before anyone chooses it. Asking the hooks does nothing.
   */
  readonly entry?: string;
  /**
   * The link's target is served by a forward of this session already (an offered port's forward): the URL
   * the browser opens instead (the same one when the host port is the container's). No other hook is asked
   * then: the target reaches the container through that forward, nothing else need be bound for it.
   */
  readonly opens?: string;
  /** Runs after the confirmation (or the gesture, when none is asked) and before the browser opens; never rejects. */
  run(): Promise<void>;
}

/** Asked with the checked href of a link about to open; null when it has nothing to do with it. */
export type UrlOpenHook = (href: string) => UrlOpenStep | null;

export class UrlOpenHooks {
  readonly #hooks: UrlOpenHook[] = [];

  add(hook: UrlOpenHook): Disposable {
    this.#hooks.push(hook);
    return toDisposable(() => {
      const i = this.#hooks.indexOf(hook);
      if (i >= 0) this.#hooks.splice(i, 1);
    });
  }

  /** The steps the hooks want for `href`, in the order the hooks were added; only the one that serves it when one does. */
  steps(href: string): UrlOpenStep[] {
    const steps = this.#hooks.map((h) => h(href)).filter((s): s is UrlOpenStep => s !== null);
    const serving = steps.find((s) => s.opens !== undefined);
    return serving === undefined ? steps : [serving];
  }
}
