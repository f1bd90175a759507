/**
 * The host's URL checks, applied whatever the capsule says: only the normalised `href` of a URL that
 * passes every check here ever reaches an opener. Pure (node:url's IDNA helper only, no I/O).
 */
import { domainToUnicode } from 'node:url';
import type { ErrorCode } from '../errors.ts';
import { envSwitch } from './env-switch.ts';

/** Longest raw URL accepted. Real links (OAuth requests included) fit; anything longer is refused. */
export const MAX_URL_LENGTH = 8192;
/** Schemes allowed without configuration. */
const DEFAULT_URL_SCHEMES: readonly string[] = ['http', 'https', 'mailto'];
/**
 * Schemes an operator's configuration can never enable: each runs code or reads local data in whatever
 * handles it (browser, shell), which no gesture on agent output should be able to trigger.
 */
const NEVER_URL_SCHEMES: readonly string[] = ['javascript', 'vbscript', 'data', 'blob', 'file', 'about'];
/** Longest `display` text; a mailto address list can be long and a notice is one line. */
const MAX_DISPLAY_LENGTH = 200;

const URL_REJECT_CODES = [
  'E_URL_SCHEME',
  'E_URL_INVALID',
  'E_URL_CREDENTIALS',
  'E_URL_CONTROL',
  'E_URL_TOO_LONG',
  'E_URL_ATTACHMENT',
] as const satisfies readonly ErrorCode[];
type UrlRejectCode = (typeof URL_REJECT_CODES)[number];

export interface UrlCheckOk {
  readonly ok: true;
  /** The normalised URL (`new URL(raw).href`): the only string an opener receives. */
  readonly href: string;
  /** Scheme and host for notices (punycode first for international names); never the query or fragment. */
  readonly display: string;
}
interface UrlCheckRejected {
  readonly ok: false;
  readonly code: UrlRejectCode;
  /** One line for the operator: what is wrong, without echoing control characters. */
  readonly reason: string;
}
export type UrlCheck = UrlCheckOk | UrlCheckRejected;

export interface UrlCheckOptions {
  /** Operator-configured schemes beyond http/https/mailto, without the colon (`ssh`, `vscode`). */
  readonly extraSchemes?: readonly string[];
}

/**
 * Control characters (C0, DEL, C1), every Unicode whitespace and format character (bidi embeddings,
 * overrides, isolates and marks U+202A-202E, U+2066-2069, U+200E/F, U+061C; zero-width characters;
 * BOM): none belongs in a link the operator is shown, and each can make a link read differently.
 */
const FORBIDDEN_CHARS = /[\p{Cc}\p{Cf}\p{Z}\s]/u;
const FORBIDDEN_CHARS_GLOBAL = /[\p{Cc}\p{Cf}\p{Z}\s]/gu;
/** mailto parameters that make a mail client attach a local file (any case, any suffix: attach, attachment, attachments). */
const MAILTO_ATTACHMENT_PARAM = /^attach/iu;
const SCHEME_SYNTAX = /^[a-z][a-z0-9+.-]*$/u;

function reject(code: UrlRejectCode, reason: string): UrlCheckRejected {
  return { ok: false, code, reason };
}

function codePointLabel(ch: string): string {
  return `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The allowed schemes: defaults plus valid, non-forbidden extras, all lowercase, without colons. */
export function allowedSchemes(extraSchemes: readonly string[] = []): ReadonlySet<string> {
  const out = new Set(DEFAULT_URL_SCHEMES);
  for (const raw of extraSchemes) {
    const s = raw.trim().toLowerCase().replace(/:$/u, '');
    if (SCHEME_SYNTAX.test(s) && !NEVER_URL_SCHEMES.includes(s)) out.add(s);
  }
  return out;
}

function displayHost(hostname: string): string {
  if (!hostname.split('.').some((label) => label.startsWith('xn--'))) return hostname;
  const unicode = domainToUnicode(hostname);
  // domainToUnicode returns '' for invalid punycode; then the ASCII form is all we can honestly show.
  if (unicode === '' || unicode === hostname || FORBIDDEN_CHARS.test(unicode)) return hostname;
  return `${hostname} (${unicode})`;
}

/** Scheme and host (with port) of a parsed URL; for an opaque URL such as mailto, its path. */
function displayOf(url: URL): string {
  let out: string;
  if (url.host !== '') {
    const port = url.port === '' ? '' : `:${url.port}`;
    const host = displayHost(url.hostname);
    // Keep the punycode-first form and put the port on the ASCII part.
    const paren = host.indexOf(' (');
    out = paren === -1 ? `${url.protocol}//${host}${port}` : `${url.protocol}//${host.slice(0, paren)}${port}${host.slice(paren)}`;
  } else {
    out = `${url.protocol}${url.pathname}`;
  }
  return out.length > MAX_DISPLAY_LENGTH ? `${out.slice(0, MAX_DISPLAY_LENGTH - 1)}…` : out;
}

/**
 * Checks a URL from anywhere (screen text, OSC 8 target, a capsule frame, an offer) before it may be
 * opened on the host. On success, `href` is what the opener gets; it always starts with an allowed
 * scheme, so no opener can read it as an option.
 */
export function checkUrl(raw: string, options: UrlCheckOptions = {}): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) {
    return reject('E_URL_TOO_LONG', `link is ${raw.length} characters long, over the ${MAX_URL_LENGTH}-character limit`);
  }
  if (raw.length === 0) return reject('E_URL_INVALID', 'link is empty');
  const bad = raw.match(FORBIDDEN_CHARS);
  if (bad !== null) {
    const at = bad.index ?? 0;
    return reject('E_URL_CONTROL', `link contains a control, whitespace or bidi character (${codePointLabel(bad[0])} at position ${at})`);
  }
  if (raw.startsWith('-')) {
    return reject('E_URL_INVALID', 'link text starts with "-" and could be read as a command option');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return reject('E_URL_INVALID', 'link is not a valid absolute URL (expected e.g. https://example.com/)');
  }
  const scheme = url.protocol.replace(/:$/u, '');
  const allowed = allowedSchemes(options.extraSchemes);
  if (!allowed.has(scheme)) {
    const list = [...allowed].join(', ');
    const why = NEVER_URL_SCHEMES.includes(scheme) ? ' and can never be enabled' : '; an operator can allow it in the configuration';
    return reject('E_URL_SCHEME', `scheme "${scheme}" is not allowed (allowed: ${list})${why}`);
  }
  if (url.username !== '' || url.password !== '') {
    return reject('E_URL_CREDENTIALS', `link to ${url.protocol}//${url.host} carries a user name or password; remove the "user:pass@" part`);
  }
  if (scheme === 'mailto') {
    // Mail clients (Thunderbird, Evolution, some Outlook handlers) attach the host file a mailto link names
    // in attach=/attachment=: one click on agent output would mail ~/.ssh/id_ed25519 to anyone.
    const named = [...url.searchParams.keys()].find((k) => MAILTO_ATTACHMENT_PARAM.test(k.trim()));
    if (named !== undefined) {
      return reject(
        'E_URL_ATTACHMENT',
        `mail link asks the mail client to attach a file (parameter "${named.replace(FORBIDDEN_CHARS_GLOBAL, '?').slice(0, 32)}"); refused`,
      );
    }
  }
  if ((scheme === 'http' || scheme === 'https') && url.hostname === '') {
    return reject('E_URL_INVALID', 'link has no host');
  }
  const href = url.href;
  if (href.length > MAX_URL_LENGTH) {
    return reject('E_URL_TOO_LONG', `normalised link is ${href.length} characters long, over the ${MAX_URL_LENGTH}-character limit`);
  }
  return { ok: true, href, display: displayOf(url) };
}

/** False when JACKIN_OPEN_LINKS is an off-word (env-switch.ts: deny, off, no, 0, false, none, never; any case). */
export function linksEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return envSwitch(env, 'JACKIN_OPEN_LINKS');
}

/**
 * A URL safe to write to a log: query and fragment replaced by `?…`/`#…`, credentials dropped, control
 * characters escaped, length bounded. Logs may be shared; query strings carry tokens and OAuth codes.
 */
export function redactUrlForLog(raw: string): string {
  const escapeInvisible = (s: string): string => s.replace(/[\p{Cc}\p{Cf}\p{Z}\s]/gu, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`);
  let out: string;
  try {
    const url = new URL(raw);
    const auth = url.username !== '' || url.password !== '' ? '…@' : '';
    const base = url.host !== '' ? `${url.protocol}//${auth}${url.host}${url.pathname}` : `${url.protocol}${url.pathname}`;
    out = `${base}${url.search !== '' ? '?…' : ''}${url.hash !== '' ? '#…' : ''}`;
  } catch {
    // Not a URL: keep only what comes before any query or fragment marker, and no user info.
    const cut = raw.search(/[?#]/u);
    const head = cut === -1 ? raw : raw.slice(0, cut);
    out = `${head.replace(/^([^/]*\/\/)?[^/@]*@/u, '$1…@')}${cut === -1 ? '' : `${raw[cut] ?? ''}…`}`;
  }
  out = escapeInvisible(out);
  return out.length > 300 ? `${out.slice(0, 299)}…` : out;
}
