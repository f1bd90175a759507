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
import { JackinError } from '../errors.ts';
import { CLIPBOARD_IMAGE_METHOD, readControlReply, type ClipboardImageRead } from '../protocol/index.ts';
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

/** The types a text read answers with the pasted text (the tool's default is null). */
const TEXT_TYPES: ReadonlySet<string> = new Set(['UTF8_STRING', 'STRING', 'TEXT', 'text/plain', 'text/plain;charset=utf-8']);
/** What a list of types shows for pasted text. */
const TEXT_TARGETS = ['UTF8_STRING', 'text/plain'];

/** What the capsule remembers of the operator's last pastes (the reply checked: a staged image's name, UTF-8 text). */
async function lastPasted(runDir: string): Promise<ClipboardImageRead> {
  const socketPath = runDirSocketPath(runDir);
  let reply: unknown;
  try {
    reply = await controlRequest(socketPath, CLIPBOARD_IMAGE_METHOD, {});
  } catch (e) {
    throw new JackinError('E_NO_CAPSULE', `no capsule answers at ${socketPath} (${e instanceof Error ? e.message : String(e)}); set JACKIN_RUN_DIR`, {
      cause: e,
    });
  }
  return readControlReply(CLIPBOARD_IMAGE_METHOD, reply);
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
    throw new JackinError('E_USAGE', `cannot read ${path}: ${e.message}`, { cause: e });
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
      const pasted: ClipboardImageRead = action.clipboard ? await lastPasted(io.runDir) : { image: null, text: null };
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
        "for the operator's clipboard, a read of an image type answers the image last pasted into this session, a read of text the text " +
        'last pasted in bracketed-paste markers (else nothing).',
    )
    .argument('<tool>', `the tool: ${CLIPBOARD_TOOLS.join(', ')}`)
    .argument('[args...]', 'its arguments, after --')
    .addHelpText(
      'after',
      '\nExamples:\n  jackin-capsule clipboard xclip -- -selection clipboard -o -t image/png > shot.png\n  printf hi | jackin-capsule clipboard pbcopy --',
    )
    .action(async (tool: string, args: string[]) => {
      if (!isClipboardTool(tool)) throw new JackinError('E_USAGE', `${JSON.stringify(tool)} is not one of ${CLIPBOARD_TOOLS.join(', ')}`);
      setStatus(await clipboardCommand(tool, args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, runDir: defaultRunDir() }));
    });
}
