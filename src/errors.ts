/**
 * The one error base of the project. Every condition a caller or the CLI reacts to has a stable `code`
 * (tests assert the code, never the wording) and the exit status the CLI uses for it.
 * Programmer errors use the built-in classes (TypeError, RangeError) instead.
 */
export class JackinError extends Error {
  override readonly name: string = 'JackinError';
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, options: { cause?: unknown; exitCode?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** True when `e` is a JackinError carrying `code`. */
export function hasCode(e: unknown, code: string): boolean {
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
