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
  readonly #parser: Parser | undefined;

  constructor(term: object) {
    const core = (term as { _core?: unknown })._core;
    const inputHandler = isObject(core) ? (core as { _inputHandler?: unknown })._inputHandler : undefined;
    const parser = isObject(inputHandler) ? (inputHandler as { _parser?: unknown })._parser : undefined;
    const hasState = isObject(parser) && typeof (parser as Parser).currentState === 'number';
    this.#parser = hasState ? (parser as Parser) : undefined;
    this.found = { core: isObject(core), inputHandler: isObject(inputHandler), parser: isObject(parser), currentState: hasState };
  }

  /** The pieces not found (then `atGround()` is always false). */
  get missing(): ParserPiece[] {
    return missingPieces(this.found);
  }

  /** Whether the parser is between sequences (false when that cannot be known). */
  atGround(): boolean {
    return this.#parser?.currentState === GROUND;
  }

  /** The parser's state (xterm's ParserState: 0 between sequences, 3-6 inside a CSI, ...), if known. */
  state(): number | undefined {
    const s = this.#parser?.currentState;
    return typeof s === 'number' ? s : undefined;
  }
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}

/**
 * The longest string one cell of the screen model keeps, in UTF-16 code units: its character and at most
 * about 30 combining marks (Unicode's stream-safe text format allows 30 non-starters in a row). xterm.js
 * appends every zero-width character to the cell before the cursor without limit (6 million combining marks
 * on one cell grew the capsule by about 480 MB); terminals bound them, and so does the model, which leaves
 * out what comes past this. Only the model is cut: the operator's terminal gets the program's bytes.
 */
export const MAX_CELL_UNITS = 64;

export type CellCapPiece = 'buffer' | 'line' | 'addCodepointToCell' | 'combined';

interface CombiningLine {
  _combined: Record<number, string>;
  addCodepointToCell(index: number, codePoint: number, width: number): void;
}

const CAPPED = Symbol('jackin.cellCap');

/**
 * Bounds the combining characters of every cell (xterm's BufferLine.addCodepointToCell, patched once on
 * its prototype, which every terminal of this xterm shares). Fallback when a piece is missing: no bound
 * (the model grows with such a flood, as before); `found` names the missing piece.
 */
export function capCellCombining(term: object): PieceReport<CellCapPiece> {
  const core = (term as { _core?: unknown })._core;
  const buffer = isObject(core) ? (core as { buffer?: unknown }).buffer : undefined;
  const lines = isObject(buffer) ? (buffer as { lines?: { get?: (i: number) => unknown } }).lines : undefined;
  const line = typeof lines?.get === 'function' ? lines.get(0) : undefined;
  const proto = isObject(line) ? (Object.getPrototypeOf(line) as Partial<CombiningLine> & { [CAPPED]?: true }) : undefined;
  const add = proto?.addCodepointToCell;
  const combined = isObject(line) && isObject((line as Partial<CombiningLine>)._combined);
  const found = { buffer: isObject(buffer), line: isObject(line), addCodepointToCell: typeof add === 'function', combined };
  if (proto === undefined || typeof add !== 'function' || !combined || proto[CAPPED] === true) return found;
  proto.addCodepointToCell = function (this: CombiningLine, index: number, codePoint: number, width: number): void {
    const now = this._combined[index];
    if (now !== undefined && now.length >= MAX_CELL_UNITS) return;
    add.call(this, index, codePoint, width);
  };
  proto[CAPPED] = true;
  return found;
}
