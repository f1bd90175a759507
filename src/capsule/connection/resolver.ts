/**
 * Answers a host's Resolve request (extension `resolve`) from the capsule's screen model and the offers:
 * the link or file path at a viewport cell (or at the program's cursor), or the latest offer. The text
 * is not checked here beyond its size: the host checks every URL itself, and the export path is checked
 * against policy when it is pulled.
 */
import { MAX_RESOLVED_TEXT_BYTES, type ResolvedKind, type ResolveTarget } from '../../protocol/index.ts';
import type { LinkSource } from '../screen/links.ts';
import type { Offers } from './offers.ts';
import type { Session } from '../session/session.ts';

export interface ResolveAnswer {
  readonly kind: ResolvedKind;
  readonly text: string;
}

const NONE: ResolveAnswer = { kind: 'none', text: '' };

function answer(kind: LinkSource | 'offer', text: string | null): ResolveAnswer {
  // Longer than a Resolved frame can carry: answering with a cut text would name something else.
  if (text === null || text === '' || Buffer.byteLength(text, 'utf8') > MAX_RESOLVED_TEXT_BYTES) return NONE;
  return { kind, text };
}

/**
 * Resolves `target` at `at` (viewport row/column, 0-based; null = the program's cursor, where the token
 * just left of a blank cursor cell counts). Waits for the model to parse everything received so far.
 */
export async function resolveRequest(
  session: Pick<Session, 'settle' | 'cursor' | 'linkAt' | 'pathAt'>,
  offers: Pick<Offers, 'url' | 'file'>,
  target: ResolveTarget,
  at: { row: number; col: number } | null,
): Promise<ResolveAnswer> {
  switch (target) {
    case 'offered-link':
      return answer('offer', offers.url);
    case 'offered-file':
      return answer('offer', offers.file);
    case 'link':
    case 'path': {
      await session.settle();
      const cursor = at === null;
      const { row, col } = at ?? { row: session.cursor.y, col: session.cursor.x };
      const options = { atCursor: cursor };
      if (target === 'link') {
        const link = session.linkAt(row, col, options);
        return link === null ? NONE : answer(link.source, link.url);
      }
      const path = session.pathAt(row, col, options);
      return path === null ? NONE : answer(path.source, path.path);
    }
    default: {
      const never: never = target;
      throw new TypeError(`unexpected resolve target ${JSON.stringify(never)}`);
    }
  }
}
