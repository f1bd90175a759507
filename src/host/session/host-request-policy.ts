/**
 * The operator's switches for host requests whose origin or target the container chose. Both defaults
 * are the safe ones; each switch is documented with its risk in docs/guide.md.
 */

import { envSwitch } from '../../policy/env-switch.ts';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Whether host requests from a capsule that did not negotiate our extensions (an upstream capsule:
 * HostOpenUrl, HostPaste*, HostStage*, a pushed FileExport) are honoured at all, one per gesture:
 * `--allow-upstream-requests` or JACKIN_UPSTREAM_REQUESTS=allow (or another on-word, env-switch.ts). Otherwise
 * each is refused with a notice.
 */
export function upstreamRequestsAllowed(env: Env, flag = false): boolean {
  return flag || envSwitch(env, 'JACKIN_UPSTREAM_REQUESTS');
}

/**
 * Whether an open whose target the capsule resolved (a modifier-click, "open link under cursor", a click
 * that exports) waits for the operator's Enter in a host prompt. JACKIN_CONFIRM=never (or another off-word,
 * env-switch.ts) skips the prompt: then a capsule that lies about the screen (or a program that draws one
 * link over another) chooses what opens when you click.
 */
export function confirmCapsuleTargets(env: Env): boolean {
  return envSwitch(env, 'JACKIN_CONFIRM');
}
