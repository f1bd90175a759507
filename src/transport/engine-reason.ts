/**
 * What a failed engine command (docker, podman, kubectl) said about why, from its stderr: the lines that give
 * the reason, without the usage lines an engine prints after it (docker's last line is "Run 'docker run
 * --help' for more information", which alone says nothing), made inert (the stderr quotes image names,
 * registry answers and a container's words) and cut to a bounded length. Pure.
 */
import { inertText } from '../ui/inert-text.ts';

/** Lines that point at the engine's help rather than say what went wrong. */
const BOILERPLATE = [
  /^run '[^']*--help' for more information\.?$/i,
  /^see '[^']*--help'\.?$/i,
  /^usage:/i,
  // Podman's log lines before its "Error: ..." (a pull's retries repeat the reason three times).
  /^time="[^"]*" level=(?:warning|info|debug)\b/,
];
/** Docker says why in one or two lines ("Unable to find image ..." then the daemon's answer). */
const REASON_LINES = 3;
/** Long enough for a registry's answer with its URL; short enough for one line of an error. */
const ENGINE_REASON_MAX_COLUMNS = 400;

/** The engine's reason as one inert line (lines joined by " | "), or null when stderr says nothing more. */
export function engineReason(stderr: string, maxColumns = ENGINE_REASON_MAX_COLUMNS): string | null {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !BOILERPLATE.some((re) => re.test(l)));
  if (lines.length === 0) return null;
  return inertText(lines.slice(-REASON_LINES).join(' | '), maxColumns);
}
