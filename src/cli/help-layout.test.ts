import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from './commander.ts';
import { buildProgram } from './jackin.ts';
import { helpWidthFor, wrapHelpText } from './help-layout.ts';

/** Every command of the tree, the program first. */
function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap((c) => allCommands(c as Command))];
}

/** `command`'s whole help (before text, commander's help, after text) as printed at `width` columns. */
function helpAt(command: Command, width: number): string {
  let out = '';
  command.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => width, getOutHasColors: () => false });
  command.outputHelp();
  return out;
}

const words = (s: string): string[] => s.split(/\s+/u).filter((w) => w !== '');

// A line may pass the width only to hold one word that cannot fit: alone after its indent, or alone after
// an option's or example's term (commander's and wrapHelpText's description column).
const OVERFLOW_OF_ONE_WORD = /^\s*(\S+( \S+)*\s{2,})?\S+$/u;

test('every command of the real tree: help fits 60, 80 and 120 columns, breaking at spaces only', () => {
  const commands = allCommands(buildProgram(() => {}));
  // The tree as registered (another command added later is checked the same way).
  assert.ok(commands.length >= 10, `${commands.length} commands`);
  let wrapped = 0;
  for (const command of commands) {
    const unwrapped = helpAt(command, 100_000);
    for (const width of [60, 80, 120]) {
      const help = helpAt(command, width);
      for (const line of help.split('\n')) {
        if (line.length > width) assert.match(line, OVERFLOW_OF_ONE_WORD, `jackin ${command.name()} at ${width}: ${JSON.stringify(line)}`);
      }
      // No word split, lost or joined: the same words in the same order as with no wrapping at all.
      assert.deepEqual(words(help), words(unwrapped), `jackin ${command.name()} at ${width}`);
      if (help !== unwrapped) wrapped++;
    }
  }
  assert.ok(wrapped > commands.length, 'help was wrapped');
});

test('the after text: paragraphs re-flowed, indented example lines kept apart', () => {
  const program = buildProgram(() => {});
  const help = helpAt(program, 60);
  const after = help.slice(help.indexOf('\nExamples:'));
  // Each example stays on a line of its own, its description under it when the column does not fit.
  assert.match(after, /\n {2}jackin ls {2,}list local instances\n/u);
  assert.match(after, /\n {2}jackin run -- bash\n {6}start bash in a local capsule and attach to it\n/u);
  // The hand-wrapped source lines are joined: no line of a paragraph ends far short of the width.
  assert.match(after, /\n\(0 after a detach\)\. The other commands: 0 on success, 2 for\n/u);
});

test('wrapHelpText: paragraphs, blank lines and over-long examples', () => {
  assert.equal(wrapHelpText('one two\nthree four five\n\nsix', 9), 'one two\nthree\nfour five\n\nsix');
  assert.equal(wrapHelpText('a unbreakable-word b', 5), 'a\nunbreakable-word\nb');
  assert.equal(wrapHelpText('  cmd a b   does this and that', 40), '  cmd a b   does this and that');
  assert.equal(wrapHelpText('  cmd a b   does this and that', 24), '  cmd a b   does this\n            and that');
  assert.equal(wrapHelpText('  cmd a b   does this and that', 20), '  cmd a b\n      does this and\n      that');
  assert.equal(wrapHelpText('  command with many words here', 16), '  command with\n      many words\n      here');
});

test('helpWidthFor: the terminal, else COLUMNS, else 80', () => {
  assert.equal(helpWidthFor({ isTTY: true, columns: 132 }, { COLUMNS: '50' }), 132);
  assert.equal(helpWidthFor({}, { COLUMNS: '50' }), 50);
  assert.equal(helpWidthFor({}, { COLUMNS: 'wide' }), 80);
  assert.equal(helpWidthFor({}, {}), 80);
});
