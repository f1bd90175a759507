/**
 * Operating system commands (OSC) in the program's output, each decided by number (docs/terminal-policy.md).
 * Nothing is passed as received: what survives is written again in a canonical form ending in ST.
 */
import { checkUrl } from '../../../policy/url-safety.ts';
import { inertText } from '../../../ui/inert-text.ts';
import { DROP, type Decision, type FilterContext } from './context.ts';

/** Largest text an OSC 52 write may offer for the host clipboard (decoded bytes). */
export const MAX_COPY_BYTES = 1024 * 1024;
/** Longest OSC 52 payload kept while it arrives: base64 of MAX_COPY_BYTES plus the selection field. */
export const MAX_OSC52_BYTES = Math.ceil(MAX_COPY_BYTES / 3) * 4 + 64;
/** Longest other OSC kept (an OSC 8 target may be a long URL); longer ones are dropped whole. */
export const MAX_OSC_BYTES = 10 * 1024;
/** Titles and notifications are cut to this many columns. */
export const TITLE_MAX_COLUMNS = 120;
export const NOTIFICATION_MAX_COLUMNS = 200;

const ST = '\x1b\\';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SELECTION = /^[cpqs0-7]*$/;
const COLOR_SPEC = /^[\x21-\x3a\x3c-\x7e]{1,64}$/; // printable ASCII without ';'
const LINK_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text made inert for a title or notification: no control or bidi character, cut, no ';' field breaks. */
function inertField(s: string, columns: number): string {
  return inertText(s, columns).replaceAll(';', ',');
}

export function oscDecision(ctx: FilterContext, content: Buffer, overflow: boolean): Decision {
  const semi = content.indexOf(0x3b);
  const ps = content.subarray(0, semi < 0 ? content.length : semi).toString('latin1');
  if (overflow) {
    if (ps === '52') {
      ctx.event({ type: 'copy-refused', reason: `the text is over the ${MAX_COPY_BYTES / 1024 / 1024} MiB limit` });
      return DROP;
    }
    return ctx.dropped('OSC over the length limit');
  }
  const rest = semi < 0 ? '' : content.subarray(semi + 1).toString('utf8');
  switch (ps) {
    case '0':
    case '1':
    case '2':
      return title(ctx, ps, rest);
    case '4':
      return colors(ctx, rest);
    case '10':
    case '11':
    case '12':
      return dynamicColors(ctx, Number(ps), rest);
    case '104':
    case '110':
    case '111':
    case '112':
      return colourReset(ctx, ps, semi < 0 ? null : rest);
    case '8':
      return hyperlink(ctx, rest);
    case '52':
      return clipboard(ctx, content.subarray(semi + 1));
    case '9':
    case '99':
    case '777':
      return notification(ctx, ps, rest);
    default:
      return ctx.dropped(/^\d{1,5}$/.test(ps) ? `OSC ${ps}` : 'OSC');
  }
}

function title(ctx: FilterContext, ps: string, text: string): Decision {
  const push = ctx.tracked.titlePushed ? '' : '\x1b[22;0t';
  ctx.tracked.titlePushed = true;
  // OSC 1 is the icon name only; 0 and 2 set the window title, which names the program's notifications.
  if (ps !== '1') ctx.programTitle = text === '' ? null : inertText(text, TITLE_MAX_COLUMNS);
  return `${push}\x1b]${ps};${inertField(text, TITLE_MAX_COLUMNS)}${ST}`;
}

/** OSC 4 ; index ; spec [; index ; spec]...: sets (restored at exit) and queries (a reply is due). */
function colors(ctx: FilterContext, rest: string): Decision {
  const f = rest.split(';');
  if (f.length < 2 || f.length % 2 !== 0 || f.length > 64) return ctx.dropped('OSC 4');
  for (let i = 0; i < f.length; i += 2) {
    if (!/^\d{1,3}$/.test(f[i]!) || Number(f[i]) > 255 || !COLOR_SPEC.test(f[i + 1]!)) return ctx.dropped('OSC 4');
  }
  const queries: string[] = [];
  for (let i = 0; i < f.length; i += 2) {
    const n = Number(f[i]);
    if (f[i + 1] === '?') queries.push(`${n};?`);
    else {
      ctx.tracked.palette = true;
      ctx.colours.palette.set(n, f[i + 1]!);
    }
  }
  if (queries.length > 0) ctx.expectations.expect('osc-color', queries.length);
  // While host UI is up the sets wait (they are put back after it); the queries are answered now.
  if (ctx.hostColoursHeld) return queries.length === 0 ? DROP : `\x1b]4;${queries.join(';')}${ST}`;
  return `\x1b]4;${rest}${ST}`;
}

/** OSC 10/11/12 ; spec [; spec]...: each spec applies to the next colour (foreground, background, cursor). */
function dynamicColors(ctx: FilterContext, first: number, rest: string): Decision {
  const specs = rest.split(';');
  if (specs.length === 0 || first + specs.length - 1 > 12) return ctx.dropped(`OSC ${first}`);
  if (!specs.every((s) => COLOR_SPEC.test(s))) return ctx.dropped(`OSC ${first}`);
  let queries = 0;
  let held = '';
  for (let i = 0; i < specs.length; i++) {
    const n = first + i;
    const spec = specs[i]!;
    if (spec === '?') {
      queries++;
      held += `\x1b]${n};?${ST}`;
      continue;
    }
    if (n === 10) {
      ctx.tracked.foreground = true;
      ctx.colours.foreground = spec;
    } else if (n === 11) {
      ctx.tracked.background = true;
      ctx.colours.background = spec;
    } else {
      ctx.tracked.cursorColor = true;
      held += `\x1b]12;${spec}${ST}`; // the cursor colour hides nothing of jackin's: it passes
    }
  }
  if (queries > 0) ctx.expectations.expect('osc-color', queries);
  if (ctx.hostColoursHeld) return held === '' ? DROP : held;
  return `\x1b]${first};${rest}${ST}`;
}

/** OSC 104 [; index]... , 110, 111, 112: the program's colours back to the terminal's (recorded for host UI). */
function colourReset(ctx: FilterContext, ps: string, rest: string | null): Decision {
  if (rest !== null && !/^[\d;]{0,64}$/.test(rest)) return ctx.dropped(`OSC ${ps}`);
  if (ps === '104') {
    const indexes = (rest ?? '').split(';').filter((x) => x !== '');
    if (indexes.length === 0) ctx.colours.palette.clear();
    else for (const x of indexes) ctx.colours.palette.delete(Number(x));
  } else if (ps === '110') ctx.colours.foreground = null;
  else if (ps === '111') ctx.colours.background = null;
  // Host UI up: the terminal already has the operator's colours (the cursor colour was never taken).
  if (ctx.hostColoursHeld && ps !== '112') return DROP;
  return `\x1b]${ps}${rest === null ? '' : `;${rest}`}${ST}`;
}

/** OSC 8 ; params ; target: kept only when the target passes the host's URL check; the label is text anyway. */
function hyperlink(ctx: FilterContext, rest: string): Decision {
  const semi = rest.indexOf(';');
  if (semi < 0) return ctx.dropped('OSC 8');
  const uri = rest.slice(semi + 1);
  if (uri === '') {
    ctx.tracked.hyperlink = false;
    return `\x1b]8;;${ST}`;
  }
  const checked = checkUrl(uri, { extraSchemes: ctx.extraSchemes });
  if (!checked.ok) {
    ctx.dropped(`OSC 8 (${checked.code})`);
    if (!ctx.tracked.hyperlink) return DROP;
    // The label of a refused link must not carry the link still open before it.
    ctx.tracked.hyperlink = false;
    return `\x1b]8;;${ST}`;
  }
  ctx.tracked.hyperlink = true;
  const id = rest
    .slice(0, semi)
    .split(':')
    .find((p) => p.startsWith('id='))
    ?.slice(3);
  const params = id !== undefined && LINK_ID.test(id) ? `id=${id}` : '';
  return `\x1b]8;${params};${checked.href}${ST}`;
}

/** OSC 52 ; selection ; data: a query is answered with nothing; a write becomes a copy offer, never passes. */
function clipboard(ctx: FilterContext, body: Buffer): Decision {
  const semi = body.indexOf(0x3b);
  if (semi < 0 || !SELECTION.test(body.subarray(0, semi).toString('latin1'))) {
    ctx.event({ type: 'copy-refused', reason: 'the clipboard request is malformed' });
    return DROP;
  }
  const data = body.subarray(semi + 1).toString('latin1');
  if (data === '?') {
    ctx.event({ type: 'clipboard-query' });
    return DROP;
  }
  if (data === '') return DROP; // "clear the selection": nothing to offer
  if (!BASE64.test(data) || data.length % 4 === 1) {
    ctx.event({ type: 'copy-refused', reason: 'the text is not valid base64' });
    return DROP;
  }
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > MAX_COPY_BYTES) {
    ctx.event({ type: 'copy-refused', reason: `the text is over the ${MAX_COPY_BYTES / 1024 / 1024} MiB limit` });
    return DROP;
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    ctx.event({ type: 'copy-refused', reason: 'the text is not valid UTF-8' });
    return DROP;
  }
  const clean = offerableText(text);
  ctx.event({ type: 'copy-offer', text: clean.text, bytes: bytes.length, removed: clean.removed });
  return DROP;
}

/** Control characters other than tab, line feed and carriage return: C0, DEL, C1. */
const OFFER_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/**
 * The text a copy offer puts on the clipboard: the offered text without control characters other than
 * tab, line feed and carriage return, so a copied text can never carry an escape sequence (a bracketed
 * paste end, palette keys) into a later paste. `removed` counts what was taken out.
 */
function offerableText(text: string): { text: string; removed: number } {
  let removed = 0;
  const out = text.replace(OFFER_CONTROLS, () => {
    removed++;
    return '';
  });
  return { text: out, removed };
}

/** OSC 9 ; text, OSC 99 ; metadata ; payload (chunks joined), OSC 777 ; notify ; title ; body: inert, rate limited, or off. */
function notification(ctx: FilterContext, ps: string, rest: string): Decision {
  if (!ctx.notify) return ctx.dropped(`OSC ${ps} (notifications off)`);
  let out: string;
  let title: string | null = null;
  let body: string;
  if (ps === '9') {
    // ConEmu's OSC 9 ; <digits> ; ... subcommands (progress, cwd...) are not notifications.
    if (/^\d+(;|$)/.test(rest)) return ctx.dropped('OSC 9 subcommand');
    body = rest;
    out = `\x1b]9;${inertField(rest, NOTIFICATION_MAX_COLUMNS)}${ST}`;
  } else if (ps === '99') {
    // kitty's notifications: chunks joined per id, only the title and body kept (kitty-notifications.ts).
    const k = ctx.kittyNotifications.accept(rest);
    if (k.kind === 'ignored') return ctx.dropped(k.what);
    if (k.kind === 'pending') return DROP;
    if (k.title !== '' && k.body !== '') {
      title = k.title;
      body = k.body;
      // Written again as kitty's two chunks under an id of jackin's; no action, so the terminal never answers.
      const id = ctx.kittyNotifications.nextTerminalId();
      out = `\x1b]99;i=${id}:d=0;${inertField(title, TITLE_MAX_COLUMNS)}${ST}\x1b]99;i=${id}:p=body;${inertField(body, NOTIFICATION_MAX_COLUMNS)}${ST}`;
    } else {
      // One text (a plain OSC 99, or a title or body alone): the notification's text, titled by the host.
      body = k.title === '' ? k.body : k.title;
      if (body === '') return ctx.dropped('OSC 99 (empty)');
      out = `\x1b]99;;${inertField(body, NOTIFICATION_MAX_COLUMNS)}${ST}`;
    }
  } else {
    const f = rest.split(';');
    if (f[0] !== 'notify' || f.length < 2) return ctx.dropped('OSC 777');
    body = f.slice(2).join(',');
    title = f[1]!;
    out = `\x1b]777;notify;${inertField(title, TITLE_MAX_COLUMNS)};${inertField(body, NOTIFICATION_MAX_COLUMNS)}${ST}`;
  }
  if (!ctx.notifications.tryTake()) return ctx.dropped(`OSC ${ps} (rate limited)`);
  ctx.event({
    type: 'notification',
    source: ps === '9' ? 'osc9' : ps === '99' ? 'osc99' : 'osc777',
    title: title === null || title === '' ? null : inertText(title, TITLE_MAX_COLUMNS),
    body: inertText(body, NOTIFICATION_MAX_COLUMNS),
  });
  return ctx.notifyTerminal ? out : DROP;
}
