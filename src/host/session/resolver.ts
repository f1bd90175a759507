/**
 * Asks our capsule what is at a cell (extension `resolve`): sends Resolve with a fresh request id and
 * waits for the Resolved carrying that id. The answer is unchecked capsule data: a URL still goes through
 * checkUrl, a path through the export policy.
 */
import { JackinError } from '../../errors.ts';
import { hasFeature, type ListedLink, type ResolvedKind, type ResolveTarget } from '../../protocol/index.ts';
import type { FeatureSession } from './feature-session.ts';

/** A local capsule answers in milliseconds; a loaded relay in well under this. */
export const RESOLVE_TIMEOUT_MS = 3000;

export interface ResolveResult {
  readonly kind: ResolvedKind;
  readonly text: string;
}

/** The part of a session a resolve needs (kept narrow so tests can drive it without a terminal). */
export type ResolveSession = Pick<FeatureSession, 'features' | 'sendFrame' | 'onFrame'>;

// Ids start high, away from the small fixed ids of AttachControl requests (detach is 1), to ease reading logs.
let nextRequestId = 1n << 32n;

/**
 * The link or path at viewport `at` (0-based; null = the program's cursor), or the latest offer. Rejects
 * with E_RESOLVE_UNSUPPORTED when the capsule does not speak `resolve`, E_RESOLVE_TIMEOUT when no answer
 * comes within `timeoutMs`.
 */
export function requestResolve(
  session: ResolveSession,
  target: ResolveTarget,
  at: { row: number; col: number } | null,
  timeoutMs: number = RESOLVE_TIMEOUT_MS,
): Promise<ResolveResult> {
  if (!hasFeature(session.features, 'resolve')) {
    return Promise.reject(
      new JackinError('E_RESOLVE_UNSUPPORTED', 'this capsule cannot resolve links or paths (no "resolve" extension); update jackin-capsule in the container'),
    );
  }
  const requestId = nextRequestId++;
  return new Promise((resolve, reject) => {
    const sub = session.onFrame((f) => {
      if (f.type !== 'Resolved' || f.requestId !== requestId) return;
      cleanup();
      resolve({ kind: f.kind, text: f.text });
    });
    const timer = setTimeout(() => {
      cleanup();
      reject(new JackinError('E_RESOLVE_TIMEOUT', `the capsule did not answer a ${target} lookup within ${timeoutMs} ms; try again, or check the connection`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      sub.dispose();
    };
    const at16 = at === null ? null : { row: Math.min(Math.max(0, at.row), 0xfffe), col: Math.min(Math.max(0, at.col), 0xfffe) };
    // A false return is only backpressure (the frame is queued); an ended session runs into the timeout.
    session.sendFrame({ type: 'Resolve', requestId, target, at: at16 });
  });
}

/**
 * The links the capsule's screen model shows (extension `link-list`): unchecked capsule data, each target
 * and position still to be checked (hints/hint-labels.ts). Resolves null when the capsule does not speak
 * `link-list`; rejects with E_LINK_LIST_TIMEOUT when no answer comes within `timeoutMs`.
 */
export function requestLinkList(session: ResolveSession, timeoutMs: number = RESOLVE_TIMEOUT_MS): Promise<ListedLink[] | null> {
  if (!hasFeature(session.features, 'link-list')) return Promise.resolve(null);
  const requestId = nextRequestId++;
  return new Promise((resolve, reject) => {
    const sub = session.onFrame((f) => {
      if (f.type !== 'Links' || f.requestId !== requestId) return;
      cleanup();
      resolve(f.links);
    });
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new JackinError('E_LINK_LIST_TIMEOUT', `the capsule did not list the links on the screen within ${timeoutMs} ms; try again, or check the connection`),
      );
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      sub.dispose();
    };
    session.sendFrame({ type: 'ListLinks', requestId });
  });
}
