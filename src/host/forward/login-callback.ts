/**
 * Which port of the container's loopback a login link calls back to (docs/guide.md, "Logging in from a
 * container"): the link itself when it is `http://localhost|127.0.0.1|[::1]:PORT/…`, or the loopback URL
 * its query names in `redirect_uri`, `redirect_url`, `callback_url`, `callback`, `return_to`, `returnTo` or
 * `oauth_callback` (percent-decoded). Pure.
 */

/**
 * Query parameters that carry an OAuth-style callback: `redirect_uri` (OAuth 2: Claude Code, Codex),
 * `redirect_url`, `callback_url` (OpenRouter, Qwen), `callback`, `return_to` / `returnTo` (Auth0-style
 * logins) and `oauth_callback` (OAuth 1.0a). Names are matched exactly, as query names are case-sensitive.
 */
export const CALLBACK_PARAMETERS = ['redirect_uri', 'redirect_url', 'callback_url', 'callback', 'return_to', 'returnTo', 'oauth_callback'] as const;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Below this a host port needs privileges: such a callback is not forwarded. */
const FIRST_UNPRIVILEGED_PORT = 1024;

/** The port of an `http://` loopback URL with an explicit port of 1024 or above, else null. */
function loopbackPort(raw: string): number | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname.toLowerCase()) || u.port === '' || u.username !== '' || u.password !== '') return null;
  const port = Number(u.port);
  return port >= FIRST_UNPRIVILEGED_PORT && port <= 65535 ? port : null;
}

/** The loopback callback port `href` leads to, or null (not a login link, or no usable port). */
export function loginCallbackPort(href: string): number | null {
  const direct = loopbackPort(href);
  if (direct !== null) return direct;
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return null;
  }
  // URLSearchParams percent-decodes once, which is how the value was put in the link.
  for (const name of CALLBACK_PARAMETERS) {
    for (const value of u.searchParams.getAll(name)) {
      const port = loopbackPort(value);
      if (port !== null) return port;
    }
  }
  return null;
}
