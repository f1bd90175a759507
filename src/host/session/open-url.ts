/**
 * Opening one URL on the host through every check, shared by the affordances that open links (links/:
 * clicks, the cursor, offers; hints/: a label typed over the screen): JACKIN_OPEN_LINKS, the host's URL
 * check, the host's own confirmation of the exact target when the capsule chose it, the other affordances'
 * steps for that link (a login forward), then the opener (which checks again and rate-limits). Every outcome is a notice and a line in the host's action log; notices name
 * scheme and host only, and nothing logs a query string or fragment.
 */
import { hasCode, refusedOrFailed } from '../../errors.ts';
import { checkUrl, linksEnabled, redactUrlForLog, type UrlCheckOk } from '../../policy/url-safety.ts';
import type { Opener } from '../platform/opener.ts';
import { cutColumns, textWidth } from '../../ui/inert-text.ts';
import { NOTICE_MAX_COLUMNS } from '../../ui/notices.ts';
import type { FeatureSession } from './feature-session.ts';

/** Where the URL came from: an OSC 8 target, a token of the text, an offer, an upstream capsule's request. */
export type UrlOrigin = 'osc8' | 'text' | 'offer' | 'capsule';

export interface UrlOpening {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly opener: Opener;
  readonly extraSchemes?: readonly string[];
  /**
   * A link the opener failed to open (no browser, no display) is handed here to be copied instead, on the
   * operator's own gesture later; returns how, for the end of the failure's notice.
   */
  readonly keepFailed?: (checked: UrlCheckOk) => string;
}

/**
 * Checks and opens one URL. `confirm`: the capsule chose the target (a click, the cursor, a hint), so the
 * operator confirms it in the host's prompt first; nothing opens before the prompt resolved true.
 */
export async function openUrlChecked(
  session: Pick<FeatureSession, 'notify' | 'logAction' | 'confirm' | 'urlOpenSteps'>,
  how: UrlOpening,
  raw: string,
  origin: UrlOrigin,
  confirm = false,
): Promise<void> {
  const logged = redactUrlForLog(raw);
  if (!linksEnabled(how.env)) {
    session.notify('warning', 'Link not opened: opening links is turned off (JACKIN_OPEN_LINKS); unset it to allow links');
    session.logAction({ action: 'open-url', target: logged, result: 'refused', detail: 'JACKIN_OPEN_LINKS' });
    return;
  }
  const checked = checkUrl(raw, how.extraSchemes === undefined ? {} : { extraSchemes: how.extraSchemes });
  if (!checked.ok) {
    session.notify('error', `Link refused: ${checked.reason}`);
    session.logAction({ action: 'open-url', target: logged, result: 'refused', detail: `${checked.code}: ${checked.reason}` });
    return;
  }
  // Other features' steps for this link (a login forward binds its callback port): shown in the prompt,
  // run once confirmed and before the browser opens, so the callback finds the port already bound.
  const steps = session.urlOpenSteps(checked.href);
  const notes = steps.flatMap((st) => (st.note === undefined ? [] : [st.note]));
  // A forward of this session serves the target under another host port: the browser opens that URL,
  // checked like any other (the prompt shows both: the target, and the note naming what opens).
  const opens = steps.find((st) => st.opens !== undefined)?.opens;
  let opened: UrlCheckOk = checked;
  if (opens !== undefined && opens !== checked.href) {
    const rewritten = checkUrl(opens, how.extraSchemes === undefined ? {} : { extraSchemes: how.extraSchemes });
    if (!rewritten.ok) {
      session.notify('error', `Link refused: ${rewritten.reason}`);
      session.logAction({ action: 'open-url', target: redactUrlForLog(opens), result: 'refused', detail: `${rewritten.code}: ${rewritten.reason}` });
      return;
    }
    opened = rewritten;
  }
  if (
    confirm &&
    !(await session.confirm({
      kind: 'url',
      target: checked.href,
      hyperlink: origin === 'osc8',
      ...(notes.length > 0 ? { notes, verb: opened === checked ? 'open and forward' : 'open' } : {}),
    }))
  ) {
    session.notify('info', `Not opened: ${checked.display}`);
    session.logAction({ action: 'open-url', target: logged, result: 'cancelled' });
    return;
  }
  for (const st of steps) await st.run();
  await launchUrl(session, how, opened, origin);
}

async function launchUrl(session: Pick<FeatureSession, 'notify' | 'logAction'>, how: UrlOpening, checked: UrlCheckOk, origin: UrlOrigin): Promise<void> {
  const { opener } = how;
  // A hyperlink's label can differ from its target: the notice always names where it really went.
  const what = origin === 'osc8' ? ' (hyperlink target)' : origin === 'offer' ? ' (offered link)' : '';
  const target = redactUrlForLog(checked.href);
  try {
    await opener.openUrl(checked);
    session.notify('success', `Opened ${checked.display}${what}`);
    session.logAction({ action: 'open-url', target, result: 'ok', ...(what === '' ? {} : { detail: what.trim() }) });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // A refusal (the rate limit) is policy; a failure (no browser here) leaves the link to be copied.
    const instead = refusedOrFailed(e) === 'failed' ? how.keepFailed?.(checked) : undefined;
    const head = `Could not open ${checked.display}: `;
    const tail = instead === undefined ? '' : `; ${instead}`;
    // A long reason (the opener's stderr) is cut, never the way to copy the link at the notice's end.
    const reason = cutColumns(message, Math.max(40, NOTICE_MAX_COLUMNS - textWidth(head) - textWidth(tail)));
    session.notify('error', hasCode(e, 'E_RATE_LIMITED') ? `Link not opened: ${message}` : `${head}${reason}${tail}`);
    session.logAction({ action: 'open-url', target, result: refusedOrFailed(e), detail: message });
  }
}
