import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JackinError } from '../errors.ts';
import { CLIPBOARD_TOOLS, emptyReadOutcome, parseClipboardTool, type ClipboardAction, type ClipboardTool } from './clipboard-tools.ts';

const copy = (over: Partial<Extract<ClipboardAction, { kind: 'copy' }>> = {}): ClipboardAction => ({
  kind: 'copy',
  text: null,
  files: [],
  trimNewline: false,
  echo: false,
  ...over,
});
const read = (type: string | null, clipboard = true): ClipboardAction => ({ kind: 'read', type, clipboard });

function usageError(e: unknown): boolean {
  return e instanceof JackinError && e.code === 'E_USAGE' && e.exitCode === 2;
}

test('clipboard tools: the forms agents and people use, parsed as the real tools parse them', () => {
  const cases: Array<[ClipboardTool, string[], ClipboardAction, { stdinIsTty?: boolean }?]> = [
    ['xclip', [], copy()],
    ['xclip', ['-selection', 'clipboard'], copy()],
    ['xclip', ['-selection', 'clipboard', '-i'], copy()],
    ['xclip', ['-sel', 'clip', '-in'], copy()],
    ['xclip', ['-selection', 'c', 'a.txt', 'b.txt'], copy({ files: ['a.txt', 'b.txt'] })],
    ['xclip', ['-selection', 'clipboard', '-rmlastnl', '-f'], copy({ trimNewline: true, echo: true })],
    ['xclip', ['-selection', 'clipboard', '-t', 'text/plain', '-i'], copy()],
    ['xclip', ['-selection', 'clipboard', '-o'], read(null)],
    ['xclip', ['-o'], read(null, false)],
    ['xclip', ['-selection', 'clipboard', '-o', '-t', 'image/png'], read('image/png')],
    ['xclip', ['-selection', 'clipboard', '-target', 'image/png', '-out'], read('image/png')],
    ['xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], { kind: 'types', clipboard: true }],
    ['xclip', ['-d', ':0', '-quiet', '-loops', '1', '-selection', 'primary', '-o'], read(null, false)],
    ['xsel', ['--clipboard', '--input'], copy()],
    ['xsel', ['-b', '-i'], copy()],
    ['xsel', ['-bi'], copy()],
    ['xsel', ['-ib', '--trim'], copy({ trimNewline: true })],
    ['xsel', ['--clipboard', '--output'], read(null)],
    ['xsel', ['-bo'], read(null)],
    ['xsel', ['-b'], copy(), { stdinIsTty: false }],
    ['xsel', ['-b'], read(null), { stdinIsTty: true }],
    ['xsel', ['-bc'], { kind: 'none' }],
    ['xsel', ['--display', ':1', '-t', '500', '-b', '-o'], read(null)],
    ['wl-copy', [], copy()],
    ['wl-copy', ['hello', 'world'], copy({ text: 'hello world' })],
    ['wl-copy', ['--', '-n', 'x'], copy({ text: '-n x' })],
    ['wl-copy', ['-n', '--type', 'text/plain;charset=utf-8'], copy({ trimNewline: true })],
    ['wl-copy', ['--trim', 'x'], copy({ text: 'x', trimNewline: true })],
    ['wl-copy', ['-pf', '--paste-once'], copy()],
    ['wl-copy', ['--clear'], { kind: 'none' }],
    ['wl-paste', [], read(null)],
    ['wl-paste', ['-n'], read(null)],
    ['wl-paste', ['--type', 'image/png'], read('image/png')],
    ['wl-paste', ['--type=image/png'], read('image/png')],
    ['wl-paste', ['-timage/png'], read('image/png')],
    ['wl-paste', ['-t', 'image/png', '--no-newline'], read('image/png')],
    ['wl-paste', ['--list-types'], { kind: 'types', clipboard: true }],
    ['wl-paste', ['-l'], { kind: 'types', clipboard: true }],
    ['wl-paste', ['-p'], read(null, false)],
    ['wl-paste', ['--prim'], read(null, false)],
    ['pbcopy', [], copy()],
    ['pbcopy', ['-pboard', 'general'], copy()],
    ['pbpaste', [], read(null)],
    ['pbpaste', ['-Prefer', 'txt'], read(null)],
    ['pbpaste', ['-pboard', 'find'], read(null, false)],
  ];
  for (const [tool, args, want, opts] of cases) assert.deepEqual(parseClipboardTool(tool, args, opts), want, `${tool} ${args.join(' ')}`);
  for (const tool of CLIPBOARD_TOOLS) {
    const help = parseClipboardTool(tool, tool.startsWith('pb') ? ['-help'] : tool === 'xclip' ? ['-help'] : ['--help']);
    assert.equal(help.kind, 'print', tool);
  }
});

test('clipboard tools: unknown options, missing values and what a shim cannot do are usage errors (exit 2), never something else', () => {
  const bad: Array<[ClipboardTool, string[]]> = [
    ['xclip', ['-bogus']],
    ['xclip', ['-s', 'clipboard']], // -selection, -silent or -sensitive
    ['xclip', ['-v']], // -verbose or -version
    ['xclip', ['-selection']],
    ['xclip', ['-selection', 'nope']],
    ['xclip', ['-selection', 'clipboard', '-t', 'image/png', '-i']],
    ['xsel', ['--bogus']],
    ['xsel', ['-b', '--follow']],
    ['xsel', ['-bz']],
    ['xsel', ['-x']],
    ['xsel', ['-bio']],
    ['xsel', ['text']],
    ['xsel', ['--inp']], // xsel takes no abbreviation
    ['wl-copy', ['--type', 'image/png']],
    ['wl-copy', ['-Q']],
    ['wl-copy', ['--type']],
    ['wl-paste', ['--watch', 'cat']],
    ['wl-paste', ['extra']],
    ['pbcopy', ['text']],
    ['pbcopy', ['-pboard', 'clipboard']],
    ['pbpaste', ['-Prefer', 'html']],
    ['pbpaste', ['-x']],
  ];
  for (const [tool, args] of bad) {
    assert.throws(() => parseClipboardTool(tool, args), usageError, `${tool} ${args.join(' ')}`);
  }
});

/** Arguments shaped like options and values, with unknown words among them. */
const WORDS = [
  '-',
  '--',
  '-o',
  '-i',
  '-b',
  '-t',
  '-p',
  '-n',
  '-l',
  '-selection',
  'clipboard',
  'image/png',
  'TARGETS',
  '--type',
  '--list-types',
  '--clipboard',
  '--output',
  '--input',
  '-pboard',
  'general',
  'text',
  '-x',
  '--x',
  '-sel',
  'c',
];

test('clipboard tools: any command line is an action or a usage error (exit 2), never another failure', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...CLIPBOARD_TOOLS),
      fc.array(fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 12 })), { maxLength: 8 }),
      fc.boolean(),
      (tool, args, stdinIsTty) => {
        let action: ClipboardAction;
        try {
          action = parseClipboardTool(tool, args, { stdinIsTty });
        } catch (e) {
          assert.ok(usageError(e), `${tool} ${JSON.stringify(args)} threw ${String(e)}`);
          return;
        }
        assert.ok(['copy', 'read', 'types', 'none', 'print'].includes(action.kind));
        // Only the writing tools write, only the reading ones read.
        if (tool === 'wl-copy' || tool === 'pbcopy') assert.ok(action.kind !== 'read' && action.kind !== 'types');
        if (tool === 'wl-paste' || tool === 'pbpaste') assert.ok(action.kind !== 'copy');
      },
    ),
    { numRuns: 2000 },
  );
});

test('clipboard tools: wl-copy offers its arguments joined with spaces; xclip copies its file operands in order', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 5 }), (words) => {
      assert.deepEqual(parseClipboardTool('wl-copy', ['--', ...words]), copy({ text: words.join(' ') }));
      const files = words.filter((w) => !w.startsWith('-'));
      assert.deepEqual(parseClipboardTool('xclip', ['-selection', 'clipboard', ...files]), copy({ files }));
    }),
  );
});

test('clipboard tools: an empty read answers as the real tool does', () => {
  assert.deepEqual(emptyReadOutcome('xclip', { kind: 'read', type: null }, false), { stderr: 'Error: target UTF8_STRING not available\n', status: 1 });
  assert.deepEqual(emptyReadOutcome('xclip', { kind: 'read', type: 'image/png' }, false), { stderr: 'Error: target image/png not available\n', status: 1 });
  assert.deepEqual(emptyReadOutcome('xclip', { kind: 'types' }, false), { stderr: 'Error: target TARGETS not available\n', status: 1 });
  assert.deepEqual(emptyReadOutcome('wl-paste', { kind: 'read', type: null }, false), { stderr: 'Nothing is copied\n', status: 1 });
  assert.deepEqual(emptyReadOutcome('wl-paste', { kind: 'read', type: null }, true), { stderr: 'No suitable type of content copied\n', status: 1 });
  assert.deepEqual(emptyReadOutcome('xsel', { kind: 'read', type: null }, false), { stderr: '', status: 0 });
  assert.deepEqual(emptyReadOutcome('pbpaste', { kind: 'read', type: null }, true), { stderr: '', status: 0 });
});
