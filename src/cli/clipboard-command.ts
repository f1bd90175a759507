/**
 * `jackin-capsule clipboard <tool> -- [args...]`: what the clipboard shims in the container run
 * (container-bin/clipboard/: xclip, xsel, wl-copy, wl-paste, pbcopy, pbpaste). A write is a copy offer,
 * made as `jackin-capsule copy` makes it (an OSC 52 to the session's terminal; the operator takes it with
 * a gesture). A read of an image type answers the image last pasted into this session (the capsule names
 * it, over its control channel; the bytes are read from `<run>/clipboard/`); a read of text answers the text
 * the operator last pasted in bracketed-paste markers (the capsule remembers at most 1 MiB), else nothing,
 * as an empty clipboard does: without the markers a paste cannot be told from typing.
 */
import { lstat, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Command } from './commander.ts';
import { isErrorCode, JackinError } from '../errors.ts';
import { defaultRunDir } from '../capsule/session/run-dir.ts';
import { runDirSocketPath } from '../transport/instance-paths.ts';
import { STAGING_DIR_NAME } from '../capsule/session/staging.ts';
import { DEFAULT_MAX_IMAGE_BYTES } from '../policy/image-signature.ts';
import { controlRequest } from '../transport/control-request.ts';
import { MAX_COPY_TEXT_BYTES, readBounded, writeCopyOffer } from './copy-command.ts';
import { CLIPBOARD_TOOLS, emptyReadOutcome, isClipboardTool, parseClipboardTool, type ClipboardAction, type ClipboardTool } from './clipboard-tools.ts';

export interface ClipboardIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
  runDir: string;
  /** The session's terminal, where a copy offer is written. */
  ttyPath?: string;
}

/** The image last pasted, as the capsule names it: `clip-<stamp>-<hex>.<ext>` and its MIME type. */
interface PastedImage {
  name: string;
  type: string;
}

/** What the capsule remembers of the operator's last pastes. */
interface Pasted {
  image: PastedImage | null;
  /** The text last pasted in bracketed-paste markers. */
  text: string | null;
}

const STAGED_NAME = /^clip-\d{8}-\d{6}-[0-9a-f]{16}\.(?:png|jpg|gif|webp|tiff)$/u;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/u;

/** The types a text read answers with the pasted text (the tool's default is null). */
const TEXT_TYPES: ReadonlySet<string> = new Set(['UTF8_STRING', 'STRING', 'TEXT', 'text/plain', 'text/plain;charset=utf-8']);
/** What a list of types shows for pasted text. */
const TEXT_TARGETS = ['UTF8_STRING', 'text/plain'];

async function lastPasted(runDir: string): Promise<Pasted> {
  const socketPath = runDirSocketPath(runDir);
  let reply: unknown;
  try {
    reply = await controlRequest(socketPath, { method: 'clipboard-image' });
  } catch (e) {
    throw new JackinError('E_NO_CAPSULE', `no capsule answers at ${socketPath} (${e instanceof Error ? e.message : String(e)}); set JACKIN_RUN_DIR`, { cause: e });
  }
  const r = reply as { ok?: unknown; code?: unknown; message?: unknown; name?: unknown; type?: unknown; text?: unknown };
  if (r.ok !== true) {
    throw new JackinError(isErrorCode(r.code) ? r.code : 'E_CONTROL_REPLY', typeof r.message === 'string' ? r.message : `the capsule refused: ${JSON.stringify(reply)}`);
  }
  return { image: pastedImage(r), text: pastedText(r.text) };
}

function pastedImage(r: { name?: unknown; type?: unknown }): PastedImage | null {
  if (r.name === null) return null;
  if (typeof r.name !== 'string' || !STAGED_NAME.test(r.name) || typeof r.type !== 'string' || !/^image\/[a-z]+$/u.test(r.type)) {
    throw new JackinError('E_CONTROL_REPLY', `the capsule named no staged image: ${JSON.stringify({ name: r.name, type: r.type })}`);
  }
  return { name: r.name, type: r.type };
}

/** The pasted text (base64 in the reply; absent from an older capsule), checked: at most 1 MiB of UTF-8. */
function pastedText(text: unknown): string | null {
  if (text === undefined || text === null) return null;
  const bad = (why: string): JackinError => new JackinError('E_CONTROL_REPLY', `the capsule's pasted text is ${why}`);
  if (typeof text !== 'string' || text.length > Math.ceil(MAX_COPY_TEXT_BYTES / 3) * 4 || text.length % 4 !== 0 || !BASE64.test(text)) throw bad('not base64 of at most 1 MiB');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length > MAX_COPY_TEXT_BYTES) throw bad('over 1 MiB');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (e) {
    throw new JackinError('E_CONTROL_REPLY', 'the capsule\'s pasted text is not UTF-8', { cause: e });
  }
}

/** The staged file's bytes, or null when it is gone (the capsule removes them only at exit). */
async function readStaged(runDir: string, name: string): Promise<Buffer | null> {
  const path = join(runDir, STAGING_DIR_NAME, name);
  try {
    const st = await lstat(path);
    if (!st.isFile() || st.size > DEFAULT_MAX_IMAGE_BYTES) return null;
    return await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

async function readFileBounded(path: string, max: number): Promise<Buffer> {
  const fh = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
    throw new JackinError('E_USAGE', `cannot read ${path}: ${e.message}`, { exitCode: 2, cause: e });
  });
  try {
    return await readBounded(fh.createReadStream({ autoClose: false }), max);
  } finally {
    await fh.close();
  }
}

function write(stream: Writable, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => stream.write(data, (e) => (e ? reject(e) : resolve())));
}

async function copy(action: Extract<ClipboardAction, { kind: 'copy' }>, io: ClipboardIo): Promise<void> {
  let text: Buffer;
  if (action.text !== null) text = Buffer.from(action.text, 'utf8');
  else if (action.files.length > 0) {
    const parts: Buffer[] = [];
    let size = 0;
    for (const f of action.files) {
      const b = f === '-' ? await readBounded(io.stdin, MAX_COPY_TEXT_BYTES - size + 1) : await readFileBounded(f, MAX_COPY_TEXT_BYTES - size + 1);
      size += b.length;
      parts.push(b);
    }
    text = Buffer.concat(parts);
  } else text = await readBounded(io.stdin, MAX_COPY_TEXT_BYTES + 1);
  if (action.trimNewline && text.at(-1) === 0x0a) text = text.subarray(0, -1);
  if (action.echo) await write(io.stdout, text);
  writeCopyOffer(text, io.ttyPath ?? '/dev/tty');
}

/** Runs one shim invocation; resolves with its exit status. Usage errors throw E_USAGE (exit status 2). */
export async function clipboardCommand(tool: ClipboardTool, args: readonly string[], io: ClipboardIo): Promise<number> {
  const action = parseClipboardTool(tool, args, { stdinIsTty: io.stdin.isTTY === true });
  switch (action.kind) {
    case 'print':
      await write(io.stdout, action.text);
      return 0;
    case 'none':
      return 0;
    case 'copy':
      await copy(action, io);
      return 0;
    case 'types':
    case 'read': {
      const pasted: Pasted = action.clipboard ? await lastPasted(io.runDir) : { image: null, text: null };
      const image = pasted.image;
      const bytes = image === null ? null : await readStaged(io.runDir, image.name);
      const text = pasted.text;
      if (action.kind === 'types' && (bytes !== null || text !== null)) {
        const types = [...(text === null ? [] : TEXT_TARGETS), ...(image === null || bytes === null ? [] : [image.type])];
        await write(io.stdout, `${tool === 'xclip' ? 'TARGETS\n' : ''}${types.map((ty) => `${ty}\n`).join('')}`);
        return 0;
      }
      if (action.kind === 'read') {
        if (text !== null && (action.type === null || TEXT_TYPES.has(action.type))) {
          await write(io.stdout, Buffer.from(text, 'utf8'));
          return 0;
        }
        if (image !== null && bytes !== null && action.type === image.type) {
          await write(io.stdout, bytes);
          return 0;
        }
      }
      const empty = emptyReadOutcome(tool, action, bytes !== null || text !== null);
      if (empty.stderr !== '') await write(io.stderr, empty.stderr);
      return empty.status;
    }
    default: {
      const never: never = action;
      throw new TypeError(`unexpected clipboard action ${JSON.stringify(never)}`);
    }
  }
}

export function registerClipboardCommand(program: Command, setStatus: (status: number) => void): void {
  program
    .command('clipboard')
    .description(
      'Run as a clipboard tool (what the xclip, xsel, wl-copy, wl-paste, pbcopy and pbpaste shims run): a write offers the text ' +
        'for the operator\'s clipboard, a read of an image type answers the image last pasted into this session, a read of text the text ' +
        'last pasted in bracketed-paste markers (else nothing).',
    )
    .argument('<tool>', `the tool: ${CLIPBOARD_TOOLS.join(', ')}`)
    .argument('[args...]', 'its arguments, after --')
    .addHelpText('after', '\nExamples:\n  jackin-capsule clipboard xclip -- -selection clipboard -o -t image/png > shot.png\n  printf hi | jackin-capsule clipboard pbcopy --')
    .action(async (tool: string, args: string[]) => {
      if (!isClipboardTool(tool)) throw new JackinError('E_USAGE', `${JSON.stringify(tool)} is not one of ${CLIPBOARD_TOOLS.join(', ')}`, { exitCode: 2 });
      setStatus(await clipboardCommand(tool, args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, runDir: defaultRunDir() }));
    });
}
