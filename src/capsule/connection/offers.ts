/**
 * Link and file offers: a program in the container (through `jackin-capsule open-url` as its BROWSER or
 * xdg-open, or `jackin-capsule offer <path>`) hands the operator a URL or a file. An offer only records
 * the latest value and tells the operator; nothing opens or is written until the operator acts on it
 * (palette **Open offered link** / **Pull offered file**, which read it back with a Resolve request).
 */
import { isAbsolute } from 'node:path';
import type { ErrorCode } from '../../errors.ts';
import { OFFER_FILE_METHOD, OFFER_URL_METHOD, OFFERS_METHOD, type NoParams, type NoticeLevel } from '../../protocol/index.ts';
import { checkUrl, redactUrlForLog } from '../../policy/url-safety.ts';
import { inertText } from '../../ui/inert-text.ts';
import { answer, refuse, type ControlAnswer, type ControlMethods } from '../session/control-methods.ts';

/** Longest offered path accepted (PATH_MAX on Linux). */
const MAX_OFFER_PATH_LENGTH = 4096;

export type OfferResult = { ok: true } | { ok: false; code: ErrorCode; message: string };

export class Offers {
  #latestUrl: string | null = null;
  #latestFile: string | null = null;

  /** The latest offered URL (checked lightly here; the host checks it again before opening). */
  get url(): string | null {
    return this.#latestUrl;
  }

  /** The latest offered file: an absolute container path, checked against policy only when pulled. */
  get file(): string | null {
    return this.#latestFile;
  }

  /**
   * Records a URL offer. The light check refuses what the host would refuse anyway (file paths, other
   * schemes, credentials, control characters), so the program learns at once that its offer is useless.
   */
  offerUrl(raw: string): OfferResult {
    const checked = checkUrl(raw);
    if (!checked.ok) return { ok: false, code: checked.code, message: `not offered: ${checked.reason}` };
    this.#latestUrl = checked.href;
    return { ok: true };
  }

  offerFile(path: string): OfferResult {
    if (path.length === 0 || path.length > MAX_OFFER_PATH_LENGTH || path.includes('\0')) {
      return { ok: false, code: 'E_BAD_REQUEST', message: `offered path must be 1..${MAX_OFFER_PATH_LENGTH} characters without NUL` };
    }
    if (!isAbsolute(path)) {
      return {
        ok: false,
        code: 'E_BAD_REQUEST',
        message: `offered path ${JSON.stringify(path)} is not absolute; resolve it against the working directory first`,
      };
    }
    this.#latestFile = path;
    return { ok: true };
  }
}

/** The notice for a URL offer: scheme, host and path only (queries carry OAuth state), made inert. */
function urlOfferNotice(href: string): string {
  return `Link offered: ${inertText(redactUrlForLog(href), 160)} (palette: Open offered link)`;
}

function fileOfferNotice(path: string): string {
  return `File offered: ${inertText(path, 160)} (palette: Pull offered file)`;
}

function reply(result: OfferResult): ControlAnswer<NoParams> {
  return result.ok ? answer({}) : refuse(result.code, result.message);
}

/**
 * Registers `offer-url`, `offer-file` and `offers` on the control channel. `notify` reaches the attached
 * operator (a no-op when nobody is attached: the offer stays recorded for the next attach).
 */
export function registerOfferMethods(control: ControlMethods, offers: Offers, notify: (level: NoticeLevel, text: string) => void): void {
  control.register(OFFER_URL_METHOD, ({ url }) => {
    const result = offers.offerUrl(url);
    if (result.ok && offers.url !== null) notify('info', urlOfferNotice(offers.url));
    return reply(result);
  });
  control.register(OFFER_FILE_METHOD, ({ path }) => {
    const result = offers.offerFile(path);
    if (result.ok) notify('info', fileOfferNotice(path));
    return reply(result);
  });
  control.register(OFFERS_METHOD, () => answer({ file: offers.file, url: offers.url }));
}
