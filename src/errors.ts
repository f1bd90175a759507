/**
 * Every error code of the project, in one list: the type ErrorCode derives from it, and docs/errors.md
 * documents each one (meaning, exit status, the fix); test/errors-doc.test.ts keeps the two equal. Adding a
 * code is one line here and one row there.
 */
export const ERROR_CODES = [
  // Command line and local instances
  'E_USAGE',
  'E_INTERNAL',
  'E_NODE_VERSION',
  'E_BAD_TARGET',
  'E_BAD_KEY_SPEC',
  'E_BAD_COPY_MODE',
  'E_BAD_QUOTING',
  'E_BAD_INSTANCE_NAME',
  'E_INSTANCE_EXISTS',
  'E_INSTANCE_UNREACHABLE',
  'E_NO_INSTANCE',
  'E_INSTANCE_RUNNING',
  'E_INSTANCE_DEAD',
  'E_CAPSULE_START',
  // Remote machines (--ssh)
  'E_SSH_CONFIG',
  'E_SSH_FAILED',
  'E_REMOTE_PLATFORM',
  'E_NOT_A_TERMINAL',
  'E_STOP_TIMEOUT',
  'E_HOST_IO',
  'E_CONFIG',
  // Containers (jackin run --image, reaching a container)
  'E_SOCKET_PERMISSION',
  'E_CONTAINER_STOPPED',
  'E_ENGINE_MISSING',
  'E_ENGINE_COMMAND',
  'E_CONTAINER_EXISTS',
  'E_CONTAINER_START',
  'E_IMAGE_NOT_GLIBC',
  'E_IMAGE_NO_CAPSULE',
  'E_BAD_ENV',
  'E_BAD_VOLUME',
  // The capsule runtime (jackin runtime, --capsule runtime)
  'E_RUNTIME_FETCH',
  'E_RUNTIME_INTEGRITY',
  'E_RUNTIME_TARBALL',
  'E_RUNTIME_ARCH',
  'E_RUNTIME_CHECK',
  'E_RUNTIME_PACKAGE',
  'E_RUNTIME_CACHE',
  // Transport and control channel
  'E_SOCKET_UNAVAILABLE',
  'E_SOCKET_CONNECT',
  'E_RELAY_SPAWN',
  'E_CONTROL_REPLY',
  'E_CONTROL_TIMEOUT',
  'E_UNKNOWN_METHOD',
  'E_BAD_REQUEST',
  'E_NO_CAPSULE',
  'E_COPY_TOO_LARGE',
  'E_COPY_NOT_UTF8',
  'E_NO_TTY',
  // Capsule start-up
  'E_RUN_DIR',
  'E_SOCKET_PATH',
  'E_CAPSULE_RUNNING',
  'E_SPAWN_FAILED',
  'E_POLICY_READ',
  'E_POLICY_INVALID',
  // Protocol (decoder)
  'E_FRAME_TOO_LARGE',
  'E_FRAME_TRUNCATED',
  'E_UNKNOWN_TAG',
  'E_PAYLOAD_SHORT',
  'E_PAYLOAD_TRAILING',
  'E_BAD_ENUM',
  'E_BAD_UTF8',
  'E_BAD_LENGTH',
  'E_BAD_VALUE',
  'E_BAD_CONTEXT',
  'E_BAD_URL',
  'E_BAD_EXTENSIONS',
  // Export: the capsule's checks
  'E_BAD_PATH',
  'E_POLICY_DENIED',
  'E_NEEDS_CONFIRMATION',
  'E_NOT_FOUND',
  'E_NOT_REGULAR',
  'E_PERMISSION',
  'E_TOO_LARGE',
  'E_DIR_DISABLED',
  'E_DIR_CAP',
  'E_CHANGED_WHILE_READING',
  'E_EXPORT_IO',
  'E_EXPORT_CLOSED',
  'E_NO_OFFER',
  // Export: the host's side
  'E_EXPORT_FAILED',
  'E_EXPORT_PROTOCOL',
  'E_EXPORT_INTERRUPTED',
  'E_EXPORT_TIMEOUT',
  'E_EXPORT_STALLED',
  'E_EXPORT_CONFIG',
  'E_EXPORT_ABORTED',
  'E_EXPORT_STATE',
  'E_EXPORT_WRITE',
  'E_NO_SPACE',
  // Clipboard and image paste
  'E_BAD_CLIPBOARD_BACKEND',
  'E_CLIPBOARD_BACKEND_MISSING',
  'E_CLIPBOARD_READ_FAILED',
  'E_CLIPBOARD_WRITE_FAILED',
  'E_CLIPBOARD_TIMEOUT',
  'E_NO_CLIPBOARD_IMAGE',
  'E_TERMINAL_NO_IMAGES',
  'E_TERMINAL_CLIPBOARD_DENIED',
  'E_TERMINAL_CLIPBOARD_BUSY',
  'E_TERMINAL_CLIPBOARD_UNAVAILABLE',
  'E_TERMINAL_CLIPBOARD_FAILED',
  'E_TERMINAL_CLIPBOARD_MALFORMED',
  'E_UNSUPPORTED_IMAGE',
  'E_IMAGE_TOO_LARGE',
  'E_PATH_NOT_FOUND',
  'E_PATH_UNREADABLE',
  'E_NOT_A_FILE',
  'E_STAGING_FAILED',
  'E_STAGING_UNSAFE',
  // Verified transfers: exports, staged files and images (src/protocol/verified-transfer.ts)
  'E_TRANSFER_OFFSET',
  'E_TRANSFER_CHUNK_SIZE',
  'E_TRANSFER_SIZE_MISMATCH',
  'E_DIGEST_MISMATCH',
  // Image transfers (capsule)
  'E_TOO_MANY_TRANSFERS',
  'E_TRANSFER_ID_IN_USE',
  'E_TRANSFER_UNKNOWN',
  'E_TRANSFER_CORRELATION',
  'E_TRANSFER_IDLE',
  'E_TRANSFER_ABORTED',
  // Files in: jackin stage, pasted and dropped host files
  'E_BAD_STAGE_MAX_BYTES',
  'E_SECRET_PATH',
  'E_STAGE_DIRECTORY',
  'E_STAGE_TOO_LARGE',
  'E_BAD_STAGE_NAME',
  'E_TRANSFER_PROTOCOL',
  'E_TRANSFER_INTERRUPTED',
  'E_STAGE_TIMEOUT',
  'E_STAGE_ABORTED',
  'E_SYMLINK_DECLINED',
  // Links and opening
  'E_URL_SCHEME',
  'E_URL_INVALID',
  'E_URL_CREDENTIALS',
  'E_URL_CONTROL',
  'E_URL_TOO_LONG',
  'E_URL_ATTACHMENT',
  'E_LINKS_DISABLED',
  'E_RATE_LIMITED',
  'E_OPENER_CONFIG',
  'E_OPENER_FAILED',
  'E_RESOLVE_TIMEOUT',
  'E_RESOLVE_UNSUPPORTED',
  // Forwards: jackin forward, login callbacks
  'E_FORWARD_REFUSED',
  'E_FORWARD_TIMEOUT',
  'E_FORWARD_RESET',
  'E_FORWARD_LIMIT',
  'E_FORWARD_UNSUPPORTED',
  'E_FORWARD_PORT_TAKEN',
  'E_FORWARD_PORT',
  'E_FORWARD_PROTOCOL',
  'E_CALLBACK_ROUTER',
  // Link hints and desktop notifications
  'E_LINK_LIST_TIMEOUT',
  'E_NOTIFIER_CONFIG',
  'E_NOTIFIER_FAILED',
  'E_BAD_NOTIFY_MODE',
] as const;

/** A stable error code (see ERROR_CODES and docs/errors.md). */
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** True when `value` is one of ERROR_CODES: checks a code that arrived from the other side of a connection. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && KNOWN_CODES.has(value);
}

/**
 * Codes that mean a check said no on purpose (a policy, a cap, a rule of what may cross, the operator's
 * setting or answer), as opposed to a failure: something broke, is missing or is malformed. The host's
 * action log records an action that ends in one of these as `refused`, in any other code as `failed`
 * (docs/errors.md, "Refusals"; test/errors-doc.test.ts keeps the two lists equal).
 */
export const REFUSAL_CODES = [
  // Export: the policy and its caps
  'E_POLICY_DENIED',
  'E_NEEDS_CONFIRMATION',
  'E_NOT_REGULAR',
  'E_TOO_LARGE',
  'E_DIR_DISABLED',
  'E_DIR_CAP',
  // Host content in: what may cross, and the caps
  'E_IMAGE_TOO_LARGE',
  'E_SECRET_PATH',
  'E_STAGE_DIRECTORY',
  'E_STAGE_TOO_LARGE',
  'E_SYMLINK_DECLINED',
  // Links
  'E_URL_SCHEME',
  'E_URL_INVALID',
  'E_URL_CREDENTIALS',
  'E_URL_CONTROL',
  'E_URL_TOO_LONG',
  'E_URL_ATTACHMENT',
  'E_LINKS_DISABLED',
  'E_RATE_LIMITED',
] as const satisfies readonly ErrorCode[];

const REFUSALS: ReadonlySet<ErrorCode> = new Set(REFUSAL_CODES);

/** Whether `code` means a check said no (REFUSAL_CODES) rather than that something failed. */
export function isRefusal(code: ErrorCode): boolean {
  return REFUSALS.has(code);
}

/** How an action that ended in `e` is recorded: `refused` for a refusal code, `failed` for anything else. */
export function refusedOrFailed(e: unknown): 'refused' | 'failed' {
  return e instanceof JackinError && isRefusal(e.code) ? 'refused' : 'failed';
}

/** Codes that end a command as a usage error, exit status 2 (docs/errors.md). */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'E_USAGE',
  'E_BAD_TARGET',
  'E_BAD_INSTANCE_NAME',
  'E_BAD_ENV',
  'E_BAD_VOLUME',
  'E_BAD_STAGE_MAX_BYTES',
  'E_FORWARD_PORT',
]);

/** Codes of a transfer the operator interrupted: 130, as for Ctrl+C (a command that knows the signal says 128 + its number). */
const INTERRUPTED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['E_EXPORT_ABORTED', 'E_STAGE_ABORTED']);

/** The exit status of a command that `code` ends: 2 for a usage error, 130 for an interrupted transfer, else 1. */
export function exitStatusOf(code: ErrorCode): number {
  if (USAGE_CODES.has(code)) return 2;
  if (INTERRUPTED_CODES.has(code)) return 130;
  return 1;
}

/**
 * The one error base of the project. Every condition a caller or the CLI reacts to has a stable `code`
 * (tests assert the code, never the wording) and the exit status the CLI uses for it, which follows from
 * the code (exitStatusOf).
 * Programmer errors use the built-in classes (TypeError, RangeError) instead.
 */
export class JackinError extends Error {
  override readonly name: string = 'JackinError';
  readonly code: ErrorCode;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.exitCode = exitStatusOf(code);
  }
}

/** True when `e` is a JackinError carrying `code`. */
export function hasCode(e: unknown, code: ErrorCode): boolean {
  return e instanceof JackinError && e.code === code;
}

/** A short description of any thrown value, for one-line error output. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The `code` of a Node system error (`ENOENT`, `ENOSPC`...), or undefined for anything else. */
export function errnoOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}
