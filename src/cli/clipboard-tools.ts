/**
 * The command lines of the clipboard tools an agent may run in its container (`xclip`, `xsel`, `wl-copy`,
 * `wl-paste`, `pbcopy`, `pbpaste`), parsed the way each real tool parses them, into what jackin's shims do
 * (container-bin/clipboard/, each `jackin-capsule clipboard <tool> -- <args>`): a write becomes a copy offer;
 * a read answers the image last pasted into the session when an image type is asked for, the text last
 * pasted in bracketed-paste markers when text is, and nothing otherwise. Pure: no I/O here.
 *
 * An option the shim does not know, or one that asks for what it cannot do (`wl-paste --watch`,
 * `xsel --follow`), is a usage error (exit status 2) with one line on stderr: never something else.
 */
import { JackinError } from '../errors.ts';

export const CLIPBOARD_TOOLS = ['xclip', 'xsel', 'wl-copy', 'wl-paste', 'pbcopy', 'pbpaste'] as const;
export type ClipboardTool = (typeof CLIPBOARD_TOOLS)[number];

export function isClipboardTool(s: string): s is ClipboardTool {
  return (CLIPBOARD_TOOLS as readonly string[]).includes(s);
}

export type ClipboardAction =
  /**
   * Offer text for the operator's clipboard: `text` from the arguments (wl-copy), else the `files` in
   * order (xclip), else stdin. `trimNewline` drops one trailing newline; `echo` writes the text to stdout
   * too (xclip -filter).
   */
  | { kind: 'copy'; text: string | null; files: string[]; trimNewline: boolean; echo: boolean }
  /** Print the clipboard: `type` null for text (the tool's default), else the MIME type asked for. */
  | { kind: 'read'; type: string | null; clipboard: boolean }
  /** List what the clipboard holds (xclip -t TARGETS -o, wl-paste --list-types). */
  | { kind: 'types'; clipboard: boolean }
  /** Nothing to do (clear, delete, keep): the clipboard holds nothing jackin could take back. */
  | { kind: 'none' }
  /** Print `text` and exit 0 (help, version). */
  | { kind: 'print'; text: string };

function usage(tool: ClipboardTool, message: string): JackinError {
  return new JackinError('E_USAGE', `${tool} (jackin's clipboard shim): ${message}; see docs/guide.md, "Clipboard tools in the container"`);
}

const VERSION = (tool: ClipboardTool): string => `${tool} (jackin bridge clipboard shim: writes are copy offers, reads answer the image last pasted)\n`;
const HELP = (tool: ClipboardTool): string =>
  `${tool} is jackin's clipboard shim: a write offers the text for the operator's clipboard (they copy it with a gesture); ` +
  'a read of an image type answers the image last pasted into this session; a read of text the text last pasted ' +
  '(when the program asked for bracketed paste; else nothing).\n';

interface OptionSpec {
  /** The option's canonical name. */
  name: string;
  takesValue: boolean;
}

interface GnuSpec {
  short: Readonly<Record<string, OptionSpec>>;
  long: Readonly<Record<string, OptionSpec>>;
  /** getopt_long takes an unambiguous prefix of a long option. */
  abbreviate: boolean;
}

interface Parsed {
  options: Array<{ name: string; value: string | undefined }>;
  operands: string[];
}

/** getopt_long's grammar (permuting): `-abc`, `-tVALUE`, `-t VALUE`, `--long`, `--long=V`, `--long V`, `--`. */
function parseGnu(tool: ClipboardTool, spec: GnuSpec, args: readonly string[]): Parsed {
  const out: Parsed = { options: [], operands: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const given = eq === -1 ? a.slice(2) : a.slice(2, eq);
      let opt = spec.long[given];
      if (opt === undefined && spec.abbreviate && given.length > 0) {
        const names = Object.keys(spec.long).filter((n) => n.startsWith(given));
        const distinct = new Set(names.map((n) => spec.long[n]!.name));
        if (distinct.size > 1) throw usage(tool, `option --${given} is ambiguous (${names.map((n) => `--${n}`).join(', ')})`);
        if (names.length > 0) opt = spec.long[names[0]!];
      }
      if (opt === undefined) throw usage(tool, `unknown option --${given}`);
      if (opt.takesValue) {
        let value: string | undefined;
        if (eq !== -1) value = a.slice(eq + 1);
        else if (i + 1 < args.length) value = args[++i];
        if (value === undefined) throw usage(tool, `option --${given} needs a value`);
        out.options.push({ name: opt.name, value });
      } else {
        if (eq !== -1) throw usage(tool, `option --${given} takes no value`);
        out.options.push({ name: opt.name, value: undefined });
      }
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        const opt = spec.short[c];
        if (opt === undefined) throw usage(tool, `unknown option -${c}`);
        if (!opt.takesValue) {
          out.options.push({ name: opt.name, value: undefined });
          continue;
        }
        let value: string | undefined = a.slice(j + 1);
        if (value === '') value = i + 1 < args.length ? args[++i] : undefined;
        if (value === undefined) throw usage(tool, `option -${c} needs a value`);
        out.options.push({ name: opt.name, value });
        break;
      }
      continue;
    }
    out.operands.push(a);
  }
  return out;
}

const flag = (name: string): OptionSpec => ({ name, takesValue: false });
const valued = (name: string): OptionSpec => ({ name, takesValue: true });

/** What a read or write does not support: asked for, it is refused rather than ignored. */
function unsupported(tool: ClipboardTool, option: string, why: string): JackinError {
  return usage(tool, `${option} is not supported (${why})`);
}

// ---- xclip: X toolkit style, one dash, any unambiguous prefix (`-sel clip`, `-o`, `-t image/png`).

const XCLIP_OPTIONS: ReadonlyArray<OptionSpec> = [
  flag('in'),
  flag('out'),
  flag('filter'),
  flag('help'),
  flag('quiet'),
  flag('silent'),
  flag('verbose'),
  flag('version'),
  flag('noutf8'),
  flag('rmlastnl'),
  flag('sensitive'),
  valued('display'),
  valued('loops'),
  valued('selection'),
  valued('target'),
  valued('wait'),
];

function xclipOption(given: string): OptionSpec | 'ambiguous' | undefined {
  const exact = XCLIP_OPTIONS.find((o) => o.name === given);
  if (exact !== undefined) return exact;
  if (given === '') return undefined;
  const prefixed = XCLIP_OPTIONS.filter((o) => o.name.startsWith(given));
  // -i, -o, -t, -f, -d, -l, -r… are unique prefixes; -s and -v are ambiguous, as in xclip itself.
  if (prefixed.length === 1) return prefixed[0];
  return prefixed.length > 1 ? 'ambiguous' : undefined;
}

/** xclip reads the selection name by its first letter: primary, secondary, clipboard, buffer-cut. */
function xclipSelection(tool: ClipboardTool, value: string): 'clipboard' | 'other' {
  switch (value[0]) {
    case 'c':
      return 'clipboard';
    case 'p':
    case 's':
    case 'b':
      return 'other';
    default:
      throw usage(tool, `-selection ${JSON.stringify(value)} is not one of primary, secondary, clipboard, buffer-cut`);
  }
}

function parseXclip(args: readonly string[]): ClipboardAction {
  const tool = 'xclip';
  let mode: 'in' | 'out' = 'in';
  let target: string | null = null;
  let clipboard = false;
  let trimNewline = false;
  let echo = false;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-') || a === '-') {
      files.push(a);
      continue;
    }
    const given = a.replace(/^--?/u, '');
    const opt = xclipOption(given);
    if (opt === 'ambiguous') throw usage(tool, `option ${a} is ambiguous`);
    if (opt === undefined) throw usage(tool, `unknown option ${a}`);
    let value: string | undefined;
    if (opt.takesValue) {
      value = args[++i];
      if (value === undefined) throw usage(tool, `option ${a} needs a value`);
    }
    switch (opt.name) {
      case 'in':
        mode = 'in';
        break;
      case 'out':
        mode = 'out';
        break;
      case 'filter':
        echo = true;
        break;
      case 'rmlastnl':
        trimNewline = true;
        break;
      case 'selection':
        clipboard = xclipSelection(tool, value!) === 'clipboard';
        break;
      case 'target':
        target = value!;
        break;
      case 'help':
        return { kind: 'print', text: HELP(tool) };
      case 'version':
        return { kind: 'print', text: VERSION(tool) };
      default:
        // display, loops, wait, quiet, silent, verbose, noutf8, sensitive: nothing to do without an X server.
        break;
    }
  }
  if (mode === 'out') {
    if (target === 'TARGETS') return { kind: 'types', clipboard };
    return { kind: 'read', type: target, clipboard };
  }
  if (target !== null && !isTextType(target)) throw unsupported(tool, `-target ${target}`, 'only text can be offered for the clipboard');
  return { kind: 'copy', text: null, files, trimNewline, echo };
}

/** Types a copy offer (text) may be declared as. */
function isTextType(type: string): boolean {
  return /^(?:text\/|UTF8_STRING$|STRING$|TEXT$|COMPOUND_TEXT$)/u.test(type);
}

// ---- xsel: getopt style, its own long names without abbreviation.

const XSEL: GnuSpec = {
  short: {
    a: flag('append'),
    f: flag('follow'),
    z: flag('zeroflush'),
    i: flag('input'),
    o: flag('output'),
    c: flag('clear'),
    d: flag('delete'),
    p: flag('primary'),
    s: flag('secondary'),
    b: flag('clipboard'),
    k: flag('keep'),
    x: flag('exchange'),
    t: valued('selectionTimeout'),
    l: valued('logfile'),
    n: flag('nodetach'),
    v: flag('verbose'),
    q: flag('quiet'),
    h: flag('help'),
  },
  long: {
    append: flag('append'),
    follow: flag('follow'),
    zeroflush: flag('zeroflush'),
    input: flag('input'),
    output: flag('output'),
    clear: flag('clear'),
    delete: flag('delete'),
    primary: flag('primary'),
    secondary: flag('secondary'),
    clipboard: flag('clipboard'),
    keep: flag('keep'),
    exchange: flag('exchange'),
    display: valued('display'),
    selectionTimeout: valued('selectionTimeout'),
    logfile: valued('logfile'),
    nodetach: flag('nodetach'),
    verbose: flag('verbose'),
    quiet: flag('quiet'),
    trim: flag('trim'),
    'keep-crlf': flag('keep-crlf'),
    help: flag('help'),
    version: flag('version'),
  },
  abbreviate: false,
};

function parseXsel(args: readonly string[], stdinIsTty: boolean): ClipboardAction {
  const tool = 'xsel';
  const { options, operands } = parseGnu(tool, XSEL, args);
  if (operands.length > 0) throw usage(tool, `unexpected argument ${JSON.stringify(operands[0])} (xsel takes text on stdin)`);
  let input = false;
  let output = false;
  let clear = false;
  let clipboard = false;
  let trimNewline = false;
  for (const { name } of options) {
    switch (name) {
      case 'input':
      case 'append':
        input = true;
        break;
      case 'output':
        output = true;
        break;
      case 'clear':
      case 'delete':
        clear = true;
        break;
      case 'clipboard':
        clipboard = true;
        break;
      case 'primary':
      case 'secondary':
        clipboard = false;
        break;
      case 'trim':
        trimNewline = true;
        break;
      case 'follow':
      case 'zeroflush':
        throw unsupported(tool, `--${name}`, 'a copy offer is made once, from text that has ended');
      case 'exchange':
        throw unsupported(tool, '--exchange', 'there is no second selection to exchange with');
      case 'help':
        return { kind: 'print', text: HELP(tool) };
      case 'version':
        return { kind: 'print', text: VERSION(tool) };
      default:
        break;
    }
  }
  if (input && output) throw unsupported(tool, '--input with --output', 'the shim does one or the other');
  if (clear && !input) return { kind: 'none' };
  // xsel without -i or -o sets the selection from stdin when stdin is not a terminal, and prints it otherwise.
  if (input || (!output && !stdinIsTty)) return { kind: 'copy', text: null, files: [], trimNewline, echo: false };
  return { kind: 'read', type: null, clipboard };
}

// ---- wl-copy / wl-paste: getopt_long, abbreviations allowed.

const WL_COPY: GnuSpec = {
  short: {
    o: flag('paste-once'),
    f: flag('foreground'),
    c: flag('clear'),
    p: flag('primary'),
    n: flag('trim-newline'),
    t: valued('type'),
    s: valued('seat'),
    v: flag('version'),
    h: flag('help'),
  },
  long: {
    'paste-once': flag('paste-once'),
    foreground: flag('foreground'),
    clear: flag('clear'),
    primary: flag('primary'),
    'trim-newline': flag('trim-newline'),
    type: valued('type'),
    seat: valued('seat'),
    regular: flag('regular'),
    version: flag('version'),
    help: flag('help'),
  },
  abbreviate: true,
};

function parseWlCopy(args: readonly string[]): ClipboardAction {
  const tool = 'wl-copy';
  const { options, operands } = parseGnu(tool, WL_COPY, args);
  let trimNewline = false;
  let clear = false;
  for (const { name, value } of options) {
    if (name === 'help') return { kind: 'print', text: HELP(tool) };
    if (name === 'version') return { kind: 'print', text: VERSION(tool) };
    if (name === 'clear') clear = true;
    if (name === 'trim-newline') trimNewline = true;
    if (name === 'type' && !isTextType(value!)) throw unsupported(tool, `--type ${value!}`, 'only text can be offered for the clipboard');
  }
  if (clear) return { kind: 'none' };
  // wl-copy joins its arguments with spaces.
  return { kind: 'copy', text: operands.length > 0 ? operands.join(' ') : null, files: [], trimNewline, echo: false };
}

const WL_PASTE: GnuSpec = {
  short: {
    n: flag('no-newline'),
    l: flag('list-types'),
    p: flag('primary'),
    w: valued('watch'),
    t: valued('type'),
    s: valued('seat'),
    v: flag('version'),
    h: flag('help'),
  },
  long: {
    'no-newline': flag('no-newline'),
    'list-types': flag('list-types'),
    primary: flag('primary'),
    watch: valued('watch'),
    type: valued('type'),
    seat: valued('seat'),
    version: flag('version'),
    help: flag('help'),
  },
  abbreviate: true,
};

function parseWlPaste(args: readonly string[]): ClipboardAction {
  const tool = 'wl-paste';
  const { options, operands } = parseGnu(tool, WL_PASTE, args);
  let type: string | null = null;
  let list = false;
  let clipboard = true;
  for (const { name, value } of options) {
    switch (name) {
      case 'help':
        return { kind: 'print', text: HELP(tool) };
      case 'version':
        return { kind: 'print', text: VERSION(tool) };
      case 'watch':
        throw unsupported(tool, '--watch', 'nothing tells the shim when the operator pastes');
      case 'list-types':
        list = true;
        break;
      case 'primary':
        clipboard = false;
        break;
      case 'type':
        type = value!;
        break;
      default:
        break;
    }
  }
  // getopt permutes: wl-paste's --watch command is the only operand it takes, and that is refused above.
  if (operands.length > 0) throw usage(tool, `unexpected argument ${JSON.stringify(operands[0])}`);
  return list ? { kind: 'types', clipboard } : { kind: 'read', type, clipboard };
}

// ---- pbcopy / pbpaste: macOS, single-dash words.

function parsePb(tool: 'pbcopy' | 'pbpaste', args: readonly string[]): ClipboardAction {
  let general = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-help' || a === '-h' || a === '--help') return { kind: 'print', text: HELP(tool) };
    if (a === '-pboard' || (tool === 'pbpaste' && a === '-Prefer')) {
      const value = args[++i];
      if (value === undefined) throw usage(tool, `option ${a} needs a value`);
      if (a === '-pboard') {
        if (!['general', 'ruler', 'find', 'font'].includes(value))
          throw usage(tool, `-pboard ${JSON.stringify(value)} is not one of general, ruler, find, font`);
        general = value === 'general';
      } else if (!['txt', 'rtf', 'ps'].includes(value)) {
        throw usage(tool, `-Prefer ${JSON.stringify(value)} is not one of txt, rtf, ps`);
      }
      continue;
    }
    throw usage(
      tool,
      a.startsWith('-')
        ? `unknown option ${a}`
        : `unexpected argument ${JSON.stringify(a)} (${tool === 'pbcopy' ? 'pbcopy takes text on stdin' : 'pbpaste takes none'})`,
    );
  }
  return tool === 'pbcopy' ? { kind: 'copy', text: null, files: [], trimNewline: false, echo: false } : { kind: 'read', type: null, clipboard: general };
}

/** What `tool args` asks for; throws E_USAGE (exit status 2) for anything the shim does not do. */
export function parseClipboardTool(tool: ClipboardTool, args: readonly string[], { stdinIsTty = false }: { stdinIsTty?: boolean } = {}): ClipboardAction {
  switch (tool) {
    case 'xclip':
      return parseXclip(args);
    case 'xsel':
      return parseXsel(args, stdinIsTty);
    case 'wl-copy':
      return parseWlCopy(args);
    case 'wl-paste':
      return parseWlPaste(args);
    case 'pbcopy':
    case 'pbpaste':
      return parsePb(tool, args);
    default: {
      const never: never = tool;
      throw new TypeError(`unexpected clipboard tool ${JSON.stringify(never)}`);
    }
  }
}

/**
 * What a read prints when the clipboard has nothing of the kind asked for, as the real tool does: the
 * message on stderr (or none) and the exit status.
 */
export function emptyReadOutcome(
  tool: ClipboardTool,
  action: { kind: 'read' | 'types'; type?: string | null },
  imagePresent: boolean,
): { stderr: string; status: number } {
  switch (tool) {
    case 'xclip': {
      const target = action.kind === 'types' ? 'TARGETS' : (action.type ?? 'UTF8_STRING');
      return { stderr: `Error: target ${target} not available\n`, status: 1 };
    }
    case 'wl-paste':
      return imagePresent ? { stderr: 'No suitable type of content copied\n', status: 1 } : { stderr: 'Nothing is copied\n', status: 1 };
    case 'xsel':
    case 'pbpaste':
    case 'wl-copy':
    case 'pbcopy':
      return { stderr: '', status: 0 };
    default: {
      const never: never = tool;
      throw new TypeError(`unexpected clipboard tool ${JSON.stringify(never)}`);
    }
  }
}
