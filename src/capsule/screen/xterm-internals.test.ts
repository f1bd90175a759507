import { test } from 'node:test';
import assert from 'node:assert/strict';
import xh from '@xterm/headless';
import { XtermParserState, type ParserPiece } from './xterm-internals.ts';

const PIECES: readonly ParserPiece[] = ['core', 'inputHandler', 'parser', 'currentState'];

function write(term: InstanceType<typeof xh.Terminal>, s: string): Promise<void> {
  return new Promise((resolve) => term.write(s, resolve));
}

test('xterm internals: the installed @xterm/headless provides the parser state the screen model reads', async () => {
  const term = new xh.Terminal({ rows: 5, cols: 20, allowProposedApi: true });
  try {
    const state = new XtermParserState(term);
    for (const piece of PIECES) {
      assert.equal(state.found[piece], true, `@xterm/headless no longer provides "${piece}" (see xterm-internals.ts for the fallback)`);
    }
    assert.deepEqual(state.missing, []);
    // The state means what the model takes it to mean: ground between sequences, not ground inside one.
    await write(term, 'plain');
    assert.equal(state.atGround(), true);
    await write(term, '\x1b[3');
    assert.equal(state.atGround(), false, 'inside a CSI sequence the parser is not at ground');
    await write(term, '1mred');
    assert.equal(state.atGround(), true);
    // The numbers sequenceEnd (flood-cut.ts) follows: 1 after ESC, 2 after an intermediate, 3-6 in a CSI,
    // and a string state it does not follow.
    for (const [bytes, want] of [
      ['\x1b', 1],
      ['\x1b(', 2],
      ['\x1b[', 3],
      ['\x1b[3', 4],
      ['\x1b[3$', 5],
      ['\x1b[3<', 6],
      ['\x1b]0;t', 8],
    ] as const) {
      await write(term, bytes);
      assert.equal(state.state(), want, JSON.stringify(bytes));
      await write(term, '\x18'); // CAN: back to ground
      assert.equal(state.state(), 0);
    }
  } finally {
    term.dispose();
  }
});

test('xterm internals: a terminal without the parser is reported by name and never at ground', () => {
  const state = new XtermParserState({ _core: { _inputHandler: {} } });
  assert.deepEqual(state.found, { core: true, inputHandler: true, parser: false, currentState: false });
  assert.deepEqual(state.missing, ['parser', 'currentState']);
  assert.equal(state.atGround(), false);
  assert.equal(state.state(), undefined);
});

test('xterm internals: a parser whose state is not a number counts as missing', () => {
  const state = new XtermParserState({ _core: { _inputHandler: { _parser: { currentState: 'GROUND' } } } });
  assert.deepEqual(state.missing, ['currentState']);
  assert.equal(state.atGround(), false);
  assert.equal(state.state(), undefined);
});
