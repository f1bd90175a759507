/**
 * `jackin-capsule copy [text...]` (text from the arguments, else stdin): offers text for the operator's
 * clipboard, for tools that do not speak OSC 52 (install it as a `pbcopy`/`xclip` shim). It writes the
 * same OSC 52 a program would to the session's terminal; the host turns that into a copy offer the
 * operator takes with a gesture (docs/terminal-policy.md, "Copy offers"). Nothing reaches the host
 * clipboard without that gesture (or JACKIN_COPY=allow on the host).
 */
import { openSync, closeSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Command } from './commander.ts';
import { JackinError } from '../errors.ts';

/** The host refuses larger offers; refusing here says so at once. Same value as the host's MAX_COPY_BYTES. */
export const MAX_COPY_TEXT_BYTES = 1024 * 1024;

/** Reads `stream` whole; E_COPY_TOO_LARGE as soon as it is over `max` bytes. */
export async function readBounded(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > max) throw new JackinError('E_COPY_TOO_LARGE', `the text is over the ${max / 1024 / 1024} MiB limit of a copy offer`);
    chunks.push(b);
  }
  return Buffer.concat(chunks, size);
}

/** The OSC 52 write that offers `text` (checked: UTF-8, at most MAX_COPY_TEXT_BYTES). */
export function copyOfferSequence(text: Buffer): Buffer {
  if (text.length > MAX_COPY_TEXT_BYTES)
    throw new JackinError('E_COPY_TOO_LARGE', `the text is over the ${MAX_COPY_TEXT_BYTES / 1024 / 1024} MiB limit of a copy offer`);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(text);
  } catch {
    throw new JackinError('E_COPY_NOT_UTF8', 'the text is not valid UTF-8');
  }
  return Buffer.from(`\x1b]52;c;${text.toString('base64')}\x07`, 'latin1');
}

export async function copyCommand(words: readonly string[], stdin: Readable, ttyPath = '/dev/tty'): Promise<void> {
  const text = words.length > 0 ? Buffer.from(words.join(' '), 'utf8') : await readBounded(stdin, MAX_COPY_TEXT_BYTES);
  writeCopyOffer(text, ttyPath);
}

/** Writes the copy offer of `text` (copyOfferSequence) to the session's terminal. */
export function writeCopyOffer(text: Buffer, ttyPath = '/dev/tty'): void {
  const seq = copyOfferSequence(text);
  let fd: number;
  try {
    fd = openSync(ttyPath, 'w');
  } catch (e) {
    throw new JackinError(
      'E_NO_TTY',
      `cannot write to the session's terminal (${ttyPath}: ${(e as Error).message}); run jackin-capsule copy inside the jackin session`,
      { cause: e },
    );
  }
  try {
    writeSync(fd, seq);
  } finally {
    closeSync(fd);
  }
}

export function registerCopyCommand(program: Command): void {
  program
    .command('copy')
    .description(
      "Offer text for the operator's clipboard (from the arguments, else stdin; UTF-8, at most 1 MiB): " +
        'nothing is copied until they choose "Copy offered text" (or run jackin with JACKIN_COPY=allow).',
    )
    .argument('[text...]', 'the text (joined with spaces); read from stdin when absent')
    .addHelpText('after', '\nExample:\n  git log -1 --format=%H | jackin-capsule copy\n  jackin-capsule copy -- "some text"')
    .action(async (words: string[]) => {
      await copyCommand(words, process.stdin);
    });
}
