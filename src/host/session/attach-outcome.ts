/** How an attach session ends, and what `jackin` says and returns for each ending. */
import { inertText } from '../../ui/inert-text.ts';

export type AttachOutcome =
  /** The program exited with `status` (known from ExitStatus); `reason` is the capsule's Shutdown text, if any. */
  | { kind: 'exited'; status: number; reason?: string | null }
  /** The operator detached; the program keeps running. */
  | { kind: 'detached' }
  /** The capsule ended the session without an exit status (takeover, upstream capsule, shutdown). */
  | { kind: 'shutdown'; reason: string | null }
  /** The connection was lost or the stream broke. */
  | { kind: 'lost'; reason: string };

/** Exit status and the one line for stderr (null: say nothing) of an outcome. */
export function outcomeExit(outcome: AttachOutcome, name: string): { status: number; message: string | null } {
  switch (outcome.kind) {
    case 'exited':
      // A program that ended on its own says why itself; anything else (a stopped container) gets one line.
      return {
        status: outcome.status,
        message: outcome.status !== 0 && outcome.reason != null && !/^program exited\b/.test(outcome.reason) ? `${name}: ${inertText(outcome.reason)}` : null,
      };
    case 'detached':
      return { status: 0, message: `detached from ${name}` };
    case 'shutdown':
      return { status: 1, message: `session with ${name} ended by the capsule${outcome.reason === null ? '' : `: ${outcome.reason}`}` };
    case 'lost':
      return { status: 1, message: `lost connection to ${name}: ${outcome.reason}` };
    default: {
      const never: never = outcome;
      throw new TypeError(`unexpected outcome ${JSON.stringify(never)}`);
    }
  }
}
