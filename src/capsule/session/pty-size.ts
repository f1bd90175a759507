/**
 * The PTY size a capsule starts its program at when no size is given (`jackin-capsule serve --rows/--cols`);
 * an attaching host resizes it. Kept apart from session.ts so the CLI can name it without loading node-pty.
 */
export const DEFAULT_ROWS = 24;
export const DEFAULT_COLS = 80;
