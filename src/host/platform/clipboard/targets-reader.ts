/**
 * The X11 (`xclip`) and Wayland (`wl-paste`) readers: list the offered types, then request the best one.
 * Both tools behave alike, so one reader takes the tool's argv builders and its failure wording.
 */
import { JackinError, type ErrorCode } from '../../../errors.ts';
import { WL_PASTE_INSTALL, XCLIP_INSTALL, wlPasteReadArgv, wlPasteTypesArgv, xclipReadArgv, xclipTargetsArgv } from './argv.ts';
import { parseFileList, pickFileListType, pickImageType, pickTextType, unacceptedImageTypes } from './mime.ts';
import { describeCommand, runHelper, type HelperCommand, type HelperResult } from './run-helper.ts';
import { parsePastedPath } from '../pasted-path.ts';
import type { ClipboardContent, ClipboardReader, ReadLimits } from './types.ts';

/** A type list, a file list or the text for a path is small; a bigger one is not what we expect. */
const MAX_LIST_BYTES = 64 * 1024;
const MAX_PATH_TEXT_BYTES = 8 * 1024;
/** Listing types is a round trip to the clipboard owner; a live owner answers in milliseconds. */
const LIST_TIMEOUT_MS = 3000;

interface TargetsTool {
  name: 'xclip' | 'wl-paste';
  list: () => HelperCommand;
  read: (type: string) => HelperCommand;
  installHint: string;
  /** True when a failed listing means "nothing on the clipboard" rather than a broken backend. */
  isEmptyClipboard: (stderr: string) => boolean;
}

const XCLIP: TargetsTool = {
  name: 'xclip',
  list: xclipTargetsArgv,
  read: xclipReadArgv,
  installHint: XCLIP_INSTALL,
  // xclip says "Error: target TARGETS not available" when no client owns the clipboard; "Can't open
  // display" (a broken DISPLAY) is a real failure.
  isEmptyClipboard: (stderr) => /not available/i.test(stderr) && !/open display/i.test(stderr),
};

const WL_PASTE: TargetsTool = {
  name: 'wl-paste',
  list: wlPasteTypesArgv,
  read: wlPasteReadArgv,
  installHint: WL_PASTE_INSTALL,
  // wl-clipboard 2.x: "Nothing is copied" / "No selection"; older: "No suitable type of content copied".
  isEmptyClipboard: (stderr) => /nothing is copied|no selection|no suitable type/i.test(stderr),
};

export function createXclipReader(limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string): ClipboardReader {
  return createTargetsReader(XCLIP, limits, env, reason);
}

export function createWlPasteReader(limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string): ClipboardReader {
  return createTargetsReader(WL_PASTE, limits, env, reason);
}

function createTargetsReader(tool: TargetsTool, limits: ReadLimits, env: NodeJS.ProcessEnv, reason: string): ClipboardReader {
  const run = (cmd: HelperCommand, maxBytes: number, timeoutMs: number, overflowCode?: ErrorCode): Promise<HelperResult> =>
    runHelper(cmd, {
      timeoutMs,
      maxBytes,
      installHint: tool.installHint,
      env,
      ...(overflowCode === undefined ? {} : { overflowCode }),
    });

  const failed = (cmd: HelperCommand, r: HelperResult): JackinError =>
    new JackinError('E_CLIPBOARD_READ_FAILED', `${describeCommand(cmd)} failed (${r.signal ?? `exit ${r.exitCode}`}): ${r.stderr || 'no message'}`);

  const listTypes = async (): Promise<string[] | null> => {
    const cmd = tool.list();
    const r = await run(cmd, MAX_LIST_BYTES, Math.min(LIST_TIMEOUT_MS, limits.timeoutMs));
    if (r.exitCode !== 0) {
      if (tool.isEmptyClipboard(r.stderr)) return null;
      throw failed(cmd, r);
    }
    return r.stdout
      .toString('utf8')
      .split('\n')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  };

  const readType = async (type: string, maxBytes: number, overflowCode?: ErrorCode): Promise<Buffer> => {
    const cmd = tool.read(type);
    const r = await run(cmd, maxBytes, limits.timeoutMs, overflowCode);
    if (r.exitCode !== 0) throw failed(cmd, r);
    return r.stdout;
  };

  return {
    name: tool.name,
    reason,
    async readImage(): Promise<ClipboardContent | null> {
      const offered = await listTypes();
      if (offered === null) return null;
      // A copied file wins over any image the file manager also offers (that image is the file's icon).
      const listType = pickFileListType(offered);
      if (listType !== null) {
        const paths = parseFileList((await readType(listType, MAX_LIST_BYTES)).toString('utf8'));
        if (paths[0] !== undefined) return { kind: 'file', path: paths[0], paths, offered };
      }
      const type = pickImageType(offered);
      if (type === null) {
        const refused = unacceptedImageTypes(offered);
        if (refused.length === 0) return null;
        throw new JackinError(
          'E_UNSUPPORTED_IMAGE',
          `the clipboard offers only ${refused.join(', ')}; jackin accepts png, jpeg, gif, webp, tiff (copy the image as PNG)`,
        );
      }
      const bytes = await readType(type, limits.maxBytes, 'E_IMAGE_TOO_LARGE');
      if (bytes.length === 0) return null;
      return { kind: 'image', bytes, mimeType: type, offered };
    },
    async readPath(): Promise<string | null> {
      const offered = await listTypes();
      if (offered === null) return null;
      const listType = pickFileListType(offered);
      if (listType !== null) {
        const [path] = parseFileList((await readType(listType, MAX_LIST_BYTES)).toString('utf8'));
        if (path !== undefined) return path;
      }
      const textType = pickTextType(offered);
      if (textType === null) return null;
      return parsePastedPath(await readType(textType, MAX_PATH_TEXT_BYTES));
    },
  };
}
