/**
 * The @xterm/headless internal the screen model relies on (xterm is pinned exactly in package.json),
 * looked up once per terminal: the state of xterm's escape-sequence parser (`_core._inputHandler._parser
 * .currentState`, 0 = ground), which tells whether a new batch of output starts between sequences (and,
 * inside one, which kind: flood-cut.ts's sequenceEnd follows ESC and CSI sequences to their end). `found`
 * reports each step of the lookup; xterm-internals.test.ts checks the installed xterm provides every one
 * and names the one that vanished.
 *
 * Fallback when a piece is missing: `atGround()` is always false and `state()` undefined, so the model
 * never skips a flood that scrolled out of view (it parses every byte: slower during floods, never wrong).
 */
import { missingPieces, type PieceReport } from '../session/internals-report.ts';

export type ParserPiece = 'core' | 'inputHandler' | 'parser' | 'currentState';

/** xterm's ParserState.GROUND. */
const GROUND = 0;

interface Parser {
  currentState: unknown;
}

export class XtermParserState {
  readonly found: PieceReport<ParserPiece>;
  private readonly parser: Parser | undefined;

  constructor(term: object) {
    const core = (term as { _core?: unknown })._core;
    const inputHandler = isObject(core) ? (core as { _inputHandler?: unknown })._inputHandler : undefined;
    const parser = isObject(inputHandler) ? (inputHandler as { _parser?: unknown })._parser : undefined;
    const hasState = isObject(parser) && typeof (parser as Parser).currentState === 'number';
    this.parser = hasState ? (parser as Parser) : undefined;
    this.found = { core: isObject(core), inputHandler: isObject(inputHandler), parser: isObject(parser), currentState: hasState };
  }

  /** The pieces not found (then `atGround()` is always false). */
  get missing(): ParserPiece[] {
    return missingPieces(this.found);
  }

  /** Whether the parser is between sequences (false when that cannot be known). */
  atGround(): boolean {
    return this.parser?.currentState === GROUND;
  }

  /** The parser's state (xterm's ParserState: 0 between sequences, 3-6 inside a CSI, ...), if known. */
  state(): number | undefined {
    const s = this.parser?.currentState;
    return typeof s === 'number' ? s : undefined;
  }
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}
