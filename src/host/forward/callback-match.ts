/**
 * How the callback router (callback-router.ts) picks the session a login callback goes to (docs/guide.md,
 * "Logging in from a container"): the OAuth `state` of the link the operator opened, and the callback's path
 * when the link named one, against the request line of the connection. Pure, and bounded: a request line
 * longer than MAX_REQUEST_LINE_BYTES is refused, never buffered further.
 */
import { CALLBACK_PARAMETERS, loginCallbackPort } from './login-callback.ts';

/** The most bytes read before the request line must have ended. */
export const MAX_REQUEST_LINE_BYTES = 16 * 1024;

/** What one login link opened in a session says about its callback. */
export interface CallbackKey {
  /** The link's OAuth `state` (a secret: never printed whole), or null when it has none. */
  readonly state: string | null;
  /** The callback's path (`/callback`), or null when the link names none (any path matches). */
  readonly path: string | null;
}

/** The request line of a callback, as far as the router reads it. */
export type RequestLine =
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'request'; readonly path: string; readonly state: string | null };

const REQUEST_LINE = /^[A-Z]{1,16} (\/[\x21-\x7e]*) HTTP\/\d\.\d\r?$/;

/** The path and `state` of an HTTP request whose first bytes are `head`. Never throws. */
export function parseRequestLine(head: Buffer): RequestLine {
  const end = head.indexOf(0x0a);
  if (end < 0) return head.length >= MAX_REQUEST_LINE_BYTES ? { kind: 'invalid' } : { kind: 'incomplete' };
  if (end >= MAX_REQUEST_LINE_BYTES) return { kind: 'invalid' };
  const m = REQUEST_LINE.exec(head.subarray(0, end).toString('latin1'));
  if (m === null) return { kind: 'invalid' };
  let u: URL;
  try {
    u = new URL(m[1]!, 'http://localhost');
  } catch {
    return { kind: 'invalid' };
  }
  return { kind: 'request', path: u.pathname, state: u.searchParams.get('state') };
}

/**
 * The key of a login link: its `state` query parameter, and the path of the loopback URL it calls back to
 * (its callback parameter's). A link that is itself the loopback URL names no path: every request on its
 * port is its (a local page opened in the browser, as before callbacks were routed).
 */
export function callbackKey(href: string): CallbackKey {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return { state: null, path: null };
  }
  const state = u.searchParams.get('state');
  for (const name of CALLBACK_PARAMETERS) {
    for (const value of u.searchParams.getAll(name)) {
      if (loginCallbackPort(value) === null) continue;
      return { state, path: new URL(value).pathname };
    }
  }
  return { state, path: null };
}

/** A link registered with the router, in the order they were opened (`seq` grows). */
export interface RegisteredLink<T> extends CallbackKey {
  readonly seq: number;
  readonly owner: T;
}

function pathMatches(link: CallbackKey, path: string): boolean {
  return link.path === null || link.path === path;
}

/**
 * The owner a callback goes to, or null (no link matches: the router answers so, nothing is forwarded):
 * 1. a request with a `state`: the last opened link with that state (and its path, if it named one);
 * 2. a request without one (a page the login's own page leads to, a favicon): the owner the last routed
 *    callback went to, while it is registered;
 * 3. else the last opened link that has no state (its prompt said so), path permitting.
 */
export function pickOwner<T>(
  links: readonly RegisteredLink<T>[],
  req: { readonly path: string; readonly state: string | null },
  lastRouted: T | null,
): T | null {
  const newestFirst = [...links].sort((a, b) => b.seq - a.seq);
  if (req.state !== null) {
    const byState = newestFirst.find((l) => l.state !== null && l.state === req.state && pathMatches(l, req.path));
    if (byState !== undefined) return byState.owner;
  } else if (lastRouted !== null && links.some((l) => l.owner === lastRouted)) {
    return lastRouted;
  }
  return newestFirst.find((l) => l.state === null && pathMatches(l, req.path))?.owner ?? null;
}
