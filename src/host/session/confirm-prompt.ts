/**
 * The host's confirmation of an action whose target the capsule chose (a link resolved under a click or
 * the cursor, a path a click exports, a host file a pasted path leads to through a symlink the container may
 * have made). The capsule's screen model is untrusted, so the operator sees the
 * exact target, drawn by the host, before anything happens: the scheme and host emphasised, an
 * international host name in punycode (its Unicode form only as a warning beside it), and a hyperlink's
 * target named as such, with the text the screen showed for it. Enter confirms, Esc cancels.
 * Pure state and rendering; the session draws it and routes keys to it.
 */
import { domainToUnicode } from 'node:url';
import { drawBox } from '../../ui/box.ts';
import { charWidth, inertText } from '../../ui/inert-text.ts';
import { decodeKeys } from '../terminal/keys.ts';

export interface ConfirmRequest {
  /**
   * `url`: a link to open on the host; `export`: a container path to export (and maybe open); `stage`: a
   * host file to send into the container, reached from a pasted path through a symlink (host-file.ts).
   */
  readonly kind: 'url' | 'export' | 'stage';
  /** The checked URL href, the container path, or the host file the symlink leads to. */
  readonly target: string;
  /** The link came from an OSC 8 hyperlink (its visible text can say anything). */
  readonly hyperlink?: boolean;
  /** The text the screen showed where the operator clicked, or the path pasted, when it differs from the target. */
  readonly label?: string;
  /** What Enter does, for the hint line: `open`, `export`, `export and open`; `copy` (a URL to the clipboard) titles the box too. */
  readonly verb?: string;
  /** What else Enter does, one line each, drawn by the host under the target ("…and forward localhost:PORT to NAME"). */
  readonly notes?: readonly string[];
}

export type ConfirmKey = 'confirm' | 'cancel' | 'ignore';

/** Lines the target may take; a longer one ends with how much is left out. */
const MAX_TARGET_LINES = 6;

const BORDER = '\x1b[0;33m';
const BODY = '\x1b[0;37;40m';
const STRONG = '\x1b[0;1;97;40m';
const HOST = '\x1b[0;1;4;97;40m';
const WARN = '\x1b[0;30;43m';
const DIM = '\x1b[0;90;40m';

interface Cell {
  readonly ch: string;
  readonly style: string;
}

type Line = Cell[];

function cells(text: string, style: string): Cell[] {
  return [...text].map((ch) => ({ ch, style }));
}

/** The target as styled cells: scheme and host strong, everything else plain; all of it inert. */
function targetCells(r: ConfirmRequest): { cells: Cell[]; idn: string | null } {
  if (r.kind !== 'url') return { cells: cells(inertText(r.target, 100_000), STRONG), idn: null };
  let url: URL;
  try {
    url = new URL(r.target);
  } catch {
    return { cells: cells(inertText(r.target, 100_000), BODY), idn: null };
  }
  const head = url.host !== '' ? `${url.protocol}//` : url.protocol;
  // URL.host is already ASCII: punycode for an international name.
  const rest = url.href.slice(head.length + url.host.length);
  const unicode = url.hostname.split('.').some((l) => l.startsWith('xn--')) ? domainToUnicode(url.hostname) : '';
  return {
    cells: [...cells(head, STRONG), ...cells(url.host, HOST), ...cells(inertText(rest, 100_000), BODY)],
    idn: unicode !== '' && unicode !== url.hostname ? inertText(unicode, 80) : null,
  };
}

/** Cuts cells into lines of at most `width` columns. */
function wrap(all: readonly Cell[], width: number): Line[] {
  const lines: Line[] = [];
  let line: Cell[] = [];
  let w = 0;
  for (const c of all) {
    const cw = charWidth(c.ch.codePointAt(0) ?? 0);
    if (w + cw > width && line.length > 0) {
      lines.push(line);
      line = [];
      w = 0;
    }
    line.push(c);
    w += cw;
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

function draw(line: Line, width: number): string {
  let out = '';
  let style = '';
  let w = 0;
  for (const c of line) {
    if (c.style !== style) {
      out += c.style;
      style = c.style;
    }
    out += c.ch;
    w += charWidth(c.ch.codePointAt(0) ?? 0);
  }
  return `${out}${BODY}${' '.repeat(Math.max(0, width - w))}`;
}

export class ConfirmPrompt {
  constructor(readonly request: ConfirmRequest) {}

  /**
   * What one read of input means. Only a read that is exactly Enter confirms, so a paste or a burst of
   * typing that merely contains a carriage return never does; Esc alone or Ctrl+C cancels; the rest is ignored.
   */
  key(bytes: Uint8Array): ConfirmKey {
    const buf = Buffer.from(bytes);
    if (buf.toString('latin1') === '\r\n') return 'confirm';
    // Decoded, so Enter, Esc and Ctrl+C mean the same in every keyboard protocol the program may have
    // switched on (kitty's CSI u, modifyOtherKeys); a key's release is no key.
    const keys = decodeKeys(buf);
    if (keys.length === 1 && keys[0]!.name === 'enter') return 'confirm';
    if (keys.length === 1 && keys[0]!.name === 'ctrl-c') return 'cancel';
    if ((keys.length === 1 || keys.length === 2) && keys.every((k) => k.name === 'escape')) return 'cancel';
    return 'ignore';
  }

  /** The lines of the box, each exactly `inner` columns wide (for tests and for render()). */
  lines(inner: number): Line[] {
    const r = this.request;
    const text = inner - 2;
    const out: Line[] = [];
    const pad = (l: Line): Line => [{ ch: ' ', style: BODY }, ...l];
    const title =
      r.kind === 'url'
        ? `${r.verb === 'copy' ? 'Copy' : 'Open'} this ${r.hyperlink === true ? 'hyperlink target' : 'link'}?`
        : r.kind === 'export'
          ? 'Export this file from the container?'
          : 'Send this host file into the container?';
    out.push(pad(cells(title, BODY)));
    out.push([]);
    const { cells: target, idn } = targetCells(r);
    let wrapped = wrap(target, text);
    if (wrapped.length > MAX_TARGET_LINES) {
      const left = wrapped.slice(MAX_TARGET_LINES).reduce((n, l) => n + l.length, 0);
      wrapped = [...wrapped.slice(0, MAX_TARGET_LINES), cells(`… and ${left} more characters`, DIM)];
    }
    for (const l of wrapped) out.push(pad(l));
    if (idn !== null) out.push(pad(cells(`international name: shown as punycode; reads as ${idn}`, WARN)));
    if (r.label !== undefined && r.label !== r.target) {
      out.push([]);
      const what =
        r.kind === 'stage'
          ? 'the path pasted, a symlink that leads there, reads:'
          : r.hyperlink === true
            ? 'hyperlink target; the text on screen reads:'
            : 'the text on screen reads:';
      out.push(pad(cells(what, DIM)));
      for (const l of wrap(cells(inertText(r.label, 400), BODY), text).slice(0, 2)) out.push(pad(l));
    }
    for (const note of r.notes ?? []) {
      out.push([]);
      for (const l of wrap(cells(inertText(note, 400), STRONG), text).slice(0, 2)) out.push(pad(l));
    }
    out.push([]);
    out.push(pad(cells(`Enter ${r.verb ?? (r.kind === 'url' ? 'open' : r.kind)} · Esc cancel`, DIM)));
    return out;
  }

  /** Escape sequences that draw the prompt as a box in the middle of a rows × cols screen. */
  render(rows: number, cols: number): string {
    const width = Math.max(24, Math.min(cols - 2, 76));
    const inner = width - 2;
    const lines = this.lines(inner).slice(0, Math.max(3, rows - 2));
    return drawBox({ rows, cols, width, title: ' jackin: confirm ', border: BORDER, inner: lines.map((l) => `${BODY}${draw(l, inner)}`) }).text;
  }
}
