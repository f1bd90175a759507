/**
 * The operator's on/off switches (`JACKIN_*` environment variables) and the one vocabulary they share:
 * `JACKIN_LOGIN_FORWARD=no` turns its forward off exactly as `JACKIN_MOUSE=no` turns capture off. A variable
 * with more values than on and off (a mode such as `JACKIN_COPY`, a backend such as `JACKIN_CLIPBOARD`, a key)
 * keeps its own values and reads its "off" with isOffWord. docs/guide.md ("Environment") lists every switch. Pure.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** Words that turn a switch off (trimmed, any case). */
export const OFF_WORDS: readonly string[] = ['off', 'no', '0', 'false', 'deny', 'none', 'never'];
/** Words that turn a switch on (trimmed, any case). */
export const ON_WORDS: readonly string[] = ['on', 'yes', '1', 'true', 'allow'];

/**
 * Every on/off switch, its default, and the word of its own that also turns it on (the value the guide shows).
 * Unset, empty or any value in neither list leaves a switch at its default.
 */
export const SWITCHES = {
  /** Host link opening (opener, clicks, hints, offered links). */
  JACKIN_OPEN_LINKS: { default: true },
  /** Mouse capture for modifier-clicks (also --no-mouse). */
  JACKIN_MOUSE: { default: true },
  /** Staging a pasted absolute image path as an image. */
  JACKIN_PASTE_IMAGE_PATHS: { default: true },
  /** Staging pasted or dropped host file paths and copied file lists. */
  JACKIN_PASTE_FILE_PATHS: { default: true },
  /** The automatic forward of a loopback login callback when a login link is opened. */
  JACKIN_LOGIN_FORWARD: { default: true },
  /** Notices and palette entries for ports programs open in the container. */
  JACKIN_PORT_OFFERS: { default: true },
  /** The host's confirmation of targets the capsule resolved and of pasted paths through symlinks. */
  JACKIN_CONFIRM: { default: true },
  /** Host requests from a capsule without jackin's extensions, one per gesture. */
  JACKIN_UPSTREAM_REQUESTS: { default: false },
  /** Sixel and kitty graphics passed to the operator's terminal. */
  JACKIN_GRAPHICS: { default: false },
  /** The keys hint (palette, detach) drawn when a session starts. */
  JACKIN_HINT: { default: true },
  /** A session on the terminal's alternate screen, so a detach gives back the screen that was there before. */
  JACKIN_ALT_SCREEN: { default: true },
  /** A bell while the terminal is unfocused notifies. */
  JACKIN_NOTIFY_BELL: { default: false, onWord: 'unfocused' },
} as const satisfies Record<string, { readonly default: boolean; readonly onWord?: string }>;

export type SwitchName = keyof typeof SWITCHES;

function word(value: string): string {
  return value.trim().toLowerCase();
}

/** True when `value` is one of OFF_WORDS (trimmed, any case); false for undefined. */
export function isOffWord(value: string | undefined): boolean {
  return value !== undefined && OFF_WORDS.includes(word(value));
}

/** True when `value` is one of ON_WORDS (trimmed, any case); false for undefined. */
export function isOnWord(value: string | undefined): boolean {
  return value !== undefined && ON_WORDS.includes(word(value));
}

/** Whether the switch `name` is on: an off-word turns it off, an on-word (or its own word) on, anything else leaves its default. */
export function envSwitch(env: Env, name: SwitchName): boolean {
  const spec: { readonly default: boolean; readonly onWord?: string } = SWITCHES[name];
  const value = env[name];
  if (isOffWord(value)) return false;
  if (isOnWord(value) || (value !== undefined && spec.onWord !== undefined && word(value) === spec.onWord)) return true;
  return spec.default;
}
