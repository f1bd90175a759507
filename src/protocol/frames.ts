/**
 * Every frame of the attach protocol v1 (protocol.md sections 2-5) and of this project's negotiated
 * extensions (docs/protocol.md), as one discriminated union per direction, with the wire tags in one
 * table. Identifiers that the peer chooses (request, transfer and export ids) are u64 on the wire and
 * `bigint` here so they round-trip exactly; sizes and offsets are `number` (the decoder rejects values
 * above Number.MAX_SAFE_INTEGER).
 */
import {
  CHUNK_FRAME_CAP,
  DEFAULT_FRAME_CAP,
  LARGE_FRAME_CAP,
  LISTED_LINK_HEADER_BYTES,
  MAX_CHUNK_BYTES,
  MAX_FORWARD_DATA_BYTES,
  MAX_LISTED_LINKS,
  MAX_LISTED_URL_BYTES,
  MAX_LISTENING_PORTS,
  MAX_RESOLVED_TEXT_BYTES,
  MAX_STAGED_PATH_BYTES,
  SHA256_BYTES,
} from './limits.ts';

/** Client → server tags (0x01..0x7F). */
export const CLIENT_TAGS = {
  Hello: 0x01,
  Resize: 0x02,
  Input: 0x03,
  Command: 0x04,
  Detach: 0x05,
  FocusIn: 0x06,
  FocusOut: 0x07,
  ClipboardImage: 0x08,
  ClipboardImageStart: 0x09,
  ClipboardImageChunk: 0x0a,
  ClipboardImageEnd: 0x0b,
  ClipboardImageError: 0x0c,
  HostNotice: 0x0d,
  AttachControl: 0x0e,
  // Extensions (0x20..0x3F), sent only after the capsule advertised them.
  ExtHello: 0x20,
  Repaint: 0x21,
  Resolve: 0x22,
  StageOnly: 0x23,
  // 0x24, 0x25: file staging (stage connections only).
  ListLinks: 0x26,
  HoldReplies: 0x27,
} as const;

/** Server → client tags (top bit set). */
export const SERVER_TAGS = {
  Welcome: 0x81,
  Output: 0x82,
  SessionList: 0x83,
  Shutdown: 0x84,
  Bell: 0x85,
  HostOpenUrl: 0x86,
  FileExportStart: 0x87,
  FileExportChunk: 0x88,
  FileExportEnd: 0x89,
  HostStageImageFromClipboardPath: 0x8a,
  HostPasteImageFromClipboard: 0x8b,
  HostStageImageFromClipboard: 0x8c,
  HostRevealPath: 0x8d,
  AttachControlResponse: 0x8e,
  // Extensions (0xA0..0xBF), sent only to a host that announced them in ExtHello.
  ExitStatus: 0xa0,
  Notice: 0xa1,
  Resolved: 0xa2,
  ImageStaged: 0xa3,
  Modes: 0xa4,
  FileExportLength: 0xa5,
  // 0xa6: file staging (stage connections only).
  Links: 0xa7,
  RepliesHeld: 0xa8,
  Ports: 0xa9,
} as const;

/** A Links frame at its largest: request id, count, and MAX_LISTED_LINKS links with the longest targets. */
export const LINKS_FRAME_CAP = 8 + 1 + MAX_LISTED_LINKS * (LISTED_LINK_HEADER_BYTES + MAX_LISTED_URL_BYTES);

/** Payload caps by tag; a tag not listed here uses DEFAULT_FRAME_CAP. */
export const FRAME_CAPS: ReadonlyMap<number, number> = new Map<number, number>([
  [CLIENT_TAGS.ClipboardImage, LARGE_FRAME_CAP],
  [CLIENT_TAGS.AttachControl, LARGE_FRAME_CAP],
  [CLIENT_TAGS.ClipboardImageChunk, CHUNK_FRAME_CAP],
  [SERVER_TAGS.FileExportChunk, CHUNK_FRAME_CAP],
  // Extension frames are small by construction; tight caps keep a hostile peer from making us buffer.
  [CLIENT_TAGS.ExtHello, 4096],
  [CLIENT_TAGS.Repaint, 0],
  [SERVER_TAGS.ExitStatus, 4],
  [SERVER_TAGS.Notice, 4096],
  [CLIENT_TAGS.Resolve, 13],
  [CLIENT_TAGS.StageOnly, 8],
  [SERVER_TAGS.Resolved, 8 + 1 + MAX_RESOLVED_TEXT_BYTES],
  [SERVER_TAGS.ImageStaged, 8 + 8 + 1 + MAX_STAGED_PATH_BYTES],
  [SERVER_TAGS.Modes, 2],
  [SERVER_TAGS.FileExportLength, 16],
  [CLIENT_TAGS.ListLinks, 8],
  [SERVER_TAGS.Links, LINKS_FRAME_CAP],
  [CLIENT_TAGS.HoldReplies, 1],
  [SERVER_TAGS.RepliesHeld, 1],
  [SERVER_TAGS.Ports, 2 + 2 * MAX_LISTENING_PORTS],
  // File staging (stage connections only, src/protocol/file-stage.ts): chunk, end, staged path.
  [0x24, 16 + MAX_CHUNK_BYTES],
  [0x25, 8 + SHA256_BYTES],
  [0xa6, 16 + MAX_STAGED_PATH_BYTES],
  // Forwards (forward connections only, src/protocol/forward.ts): data, end (empty), reset (a reason byte).
  [0x30, MAX_FORWARD_DATA_BYTES],
  [0x31, 0],
  [0x32, 1],
  [0xb0, MAX_FORWARD_DATA_BYTES],
  [0xb1, 0],
  [0xb2, 1],
]);

/** The payload cap of a tag. */
export function capForTag(tag: number): number {
  return FRAME_CAPS.get(tag) ?? DEFAULT_FRAME_CAP;
}

export const IMAGE_FORMATS = ['png', 'jpeg', 'gif', 'webp', 'tiff'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
/** Wire byte of each image format (1-based). */
export const IMAGE_FORMAT_CODES: Readonly<Record<ImageFormat, number>> = {
  png: 1,
  jpeg: 2,
  gif: 3,
  webp: 4,
  tiff: 5,
};
/** File extension used when an image of this format is staged. */
export const IMAGE_EXTENSIONS: Readonly<Record<ImageFormat, string>> = {
  png: 'png',
  jpeg: 'jpg',
  gif: 'gif',
  webp: 'webp',
  tiff: 'tiff',
};

/** The optional context object of Hello and the required one of AttachControl (protocol.md section 3.8). */
export interface AttachContext {
  v: 1;
  traceparent?: string;
  tracestate?: string;
  invocation_id?: string;
  session_id?: string;
  job_id?: string;
}

export type Spawn = { kind: 'none' } | { kind: 'shell' } | { kind: 'agent'; agent: string } | { kind: 'agent-provider'; agent: string; provider: string };

/** A capability byte: 0 unset, 1 false, 2 true. */
export type TriState = 'unset' | 'false' | 'true';
export type ImageProtocol = 'unset' | 'unsupported' | 'kitty';

export interface Capabilities {
  pointerShapes: TriState;
  truecolor: TriState;
  synchronizedOutput: TriState;
  osc8: TriState;
  underlineStyle: TriState;
  imageProtocol: ImageProtocol;
}

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

export interface Hello {
  type: 'Hello';
  rows: number;
  cols: number;
  spawn: Spawn;
  env: Array<[string, string]>;
  /** Session id to focus, or null. */
  focus: bigint | null;
  term: string | null;
  termProgram: string | null;
  colorTerm: string | null;
  fg: Rgb | null;
  bg: Rgb | null;
  caps: Capabilities;
  context: AttachContext | null;
}

/** Image operations, shared by the legacy frames (0x08..0x0C) and AttachControl bodies (kinds 4..8). */
export interface ImageWhole {
  format: ImageFormat;
  bytes: Buffer;
}
export interface ImageStart {
  transferId: bigint;
  format: ImageFormat;
  size: number;
}
export interface ImageChunk {
  transferId: bigint;
  offset: number;
  bytes: Buffer;
}
export interface ImageEnd {
  transferId: bigint;
  sha256: Buffer;
}

export const CONTROL_KINDS = {
  Detach: 1,
  FocusIn: 2,
  FocusOut: 3,
  ClipboardImage: 4,
  ClipboardImageStart: 5,
  ClipboardImageChunk: 6,
  ClipboardImageEnd: 7,
  ClipboardImageError: 8,
} as const;

export type ControlBody =
  | { kind: 'Detach' }
  | { kind: 'FocusIn' }
  | { kind: 'FocusOut' }
  | ({ kind: 'ClipboardImage' } & ImageWhole)
  | ({ kind: 'ClipboardImageStart' } & ImageStart)
  | ({ kind: 'ClipboardImageChunk' } & ImageChunk)
  | ({ kind: 'ClipboardImageEnd' } & ImageEnd)
  | { kind: 'ClipboardImageError'; message: string };

/** What a Resolve request asks for: the link or path at a cell (or the cursor), or the latest offer. */
export const RESOLVE_TARGETS = ['link', 'path', 'offered-link', 'offered-file'] as const;
export type ResolveTarget = (typeof RESOLVE_TARGETS)[number];
/** Where a Resolved answer came from; `none` carries no text. */
export const RESOLVED_KINDS = ['none', 'osc8', 'text', 'offer'] as const;
export type ResolvedKind = (typeof RESOLVED_KINDS)[number];

/** Where a listed link came from: an OSC 8 hyperlink (its target), or a URL in the visible text. */
export const LISTED_LINK_SOURCES = ['osc8', 'text'] as const;
export type ListedLinkSource = (typeof LISTED_LINK_SOURCES)[number];
/**
 * One link the capsule's screen model shows: its first cell (viewport row and column, 0-based), the cells
 * it covers on that row, and its target (unchecked: the host checks it, and every position).
 */
export interface ListedLink {
  row: number;
  col: number;
  cells: number;
  source: ListedLinkSource;
  url: string;
}

/** The program's terminal modes that the host needs (mouse capture, paste, focus). */
export interface ProgramModes {
  mouseTracking: boolean;
  sgrMouse: boolean;
  bracketedPaste: boolean;
  focusReporting: boolean;
  alternateScreen: boolean;
}
/** Bit of each mode in the Modes frame's u16, in order from bit 0. */
export const MODE_BITS: readonly (keyof ProgramModes)[] = ['mouseTracking', 'sgrMouse', 'bracketedPaste', 'focusReporting', 'alternateScreen'];

/** A feature this side supports, with its version (docs/protocol.md, "Extensions"). */
export type Features = Record<string, number>;

export type ClientFrame =
  | Hello
  | { type: 'Resize'; rows: number; cols: number }
  | { type: 'Input'; bytes: Buffer }
  | { type: 'Command'; bytes: Buffer }
  | { type: 'Detach' }
  | { type: 'FocusIn' }
  | { type: 'FocusOut' }
  | ({ type: 'ClipboardImage' } & ImageWhole)
  | ({ type: 'ClipboardImageStart' } & ImageStart)
  | ({ type: 'ClipboardImageChunk' } & ImageChunk)
  | ({ type: 'ClipboardImageEnd' } & ImageEnd)
  | { type: 'ClipboardImageError'; message: string }
  | { type: 'HostNotice'; text: string }
  | { type: 'AttachControl'; requestId: bigint; context: AttachContext; body: ControlBody }
  | { type: 'ExtHello'; features: Features }
  | { type: 'Repaint' }
  /** Cell is viewport-relative and 0-based; null means the program's cursor. */
  | { type: 'Resolve'; requestId: bigint; target: ResolveTarget; at: { row: number; col: number } | null }
  /** The AttachControl image request with this id is staged but not typed into the program. */
  | { type: 'StageOnly'; requestId: bigint }
  /** Asks for the links visible on the screen (feature `link-list`). */
  | { type: 'ListLinks'; requestId: bigint }
  /** Host UI holds the program's output from the capsule's RepliesHeld on (true) or no more (false) (feature `held-replies`). */
  | { type: 'HoldReplies'; held: boolean };

export type ControlResult = 'success' | 'invalid-correlation' | 'rejected';
export const CONTROL_RESULTS: Readonly<Record<ControlResult, number>> = {
  success: 0,
  'invalid-correlation': 1,
  rejected: 2,
};

export type NoticeLevel = 'info' | 'success' | 'warning' | 'error';
export const NOTICE_LEVELS: readonly NoticeLevel[] = ['info', 'success', 'warning', 'error'];

export type ServerFrame =
  | { type: 'Welcome'; sessions: number; features: Features | null }
  | { type: 'Output'; bytes: Buffer }
  | { type: 'SessionList'; json: string }
  | { type: 'Shutdown'; reason: string | null }
  | { type: 'Bell' }
  | { type: 'HostOpenUrl'; url: string }
  | {
      type: 'FileExportStart';
      exportId: bigint;
      size: number;
      source: string;
      name: string;
      reveal: boolean;
      open: boolean;
    }
  | { type: 'FileExportChunk'; exportId: bigint; offset: number; bytes: Buffer }
  | { type: 'FileExportEnd'; exportId: bigint; sha256: Buffer }
  | { type: 'HostStageImageFromClipboardPath' }
  | { type: 'HostPasteImageFromClipboard' }
  | { type: 'HostStageImageFromClipboard' }
  | { type: 'HostRevealPath'; path: string }
  | { type: 'AttachControlResponse'; requestId: bigint; result: ControlResult }
  | { type: 'ExitStatus'; status: number }
  | { type: 'Notice'; level: NoticeLevel; text: string }
  | { type: 'Resolved'; requestId: bigint; kind: ResolvedKind; text: string }
  | { type: 'ImageStaged'; requestId: bigint; bytes: number; pasted: boolean; path: string }
  | ({ type: 'Modes' } & ProgramModes)
  | { type: 'FileExportLength'; exportId: bigint; size: number }
  | { type: 'Links'; requestId: bigint; links: ListedLink[] }
  /** Where in the output the capsule starts (true) or stops (false) answering position and status queries (feature `held-replies`). */
  | { type: 'RepliesHeld'; held: boolean }
  /** The TCP ports programs listen on in the container now, reachable on its loopback, ascending (feature `ports`). */
  | { type: 'Ports'; ports: number[] };

export type Frame = ClientFrame | ServerFrame;

/** Which peer sends the frames a decoder reads. */
export type Direction = 'client' | 'server';

/** Programmer guard: `switch` statements over the unions end with this. */
export function assertNever(x: never): never {
  throw new TypeError(`unexpected variant: ${JSON.stringify(x)}`);
}
