/** Numeric limits of the attach protocol v1 (protocol.md sections 1-4). Every size on the wire is checked
 * against one of these before it is used. */

const KiB = 1024;
export const MiB = 1024 * KiB;

/** Frame header: tag u8 + length u32 big-endian. */
export const FRAME_HEADER_BYTES = 5;

/** Cap for any tag not listed in the caps table. */
export const DEFAULT_FRAME_CAP = 4 * MiB;
/** ClipboardImage (0x08) and AttachControl (0x0E). */
export const LARGE_FRAME_CAP = 16 * MiB;
/** ClipboardImageChunk (0x0A) and FileExportChunk (0x88): 1 MiB of data plus id and offset. */
export const CHUNK_FRAME_CAP = 1 * MiB + 16;

/** Largest single-frame image: the 16 MiB cap less the format byte. */
export const MAX_SINGLE_IMAGE_BYTES = 16 * MiB - 1;
/** Largest data part of one chunk frame. */
export const MAX_CHUNK_BYTES = 1 * MiB;
/** Largest image that may travel as a chunked transfer. */
export const MAX_IMAGE_TRANSFER_BYTES = 64 * MiB;

export const SHA256_BYTES = 32;

// Hello (section 3).
export const HELLO_MAX_ENV = 64;
export const HELLO_MAX_ENV_KEY = 1024;
export const HELLO_MAX_ENV_VALUE = 8192;
export const HELLO_MAX_TERM_FIELD = 1024;
export const HELLO_MAX_PROVIDER = 64;
export const CONTEXT_MAX_SESSION_ID = 64;

// Text frames.
export const MAX_IMAGE_ERROR_BYTES = 1024;
export const MAX_HOST_NOTICE_BYTES = 2048;
export const MAX_EXPORT_SOURCE_BYTES = 4096;
export const MAX_EXPORT_NAME_BYTES = 255;
export const MAX_REVEAL_PATH_BYTES = 4096;
/** Extension frames: text of a Resolved answer, path of an ImageStaged report. */
export const MAX_RESOLVED_TEXT_BYTES = 4096;
export const MAX_STAGED_PATH_BYTES = 4096;
/** Largest data part of one ForwardData frame (forward connections, src/protocol/forward.ts). */
export const MAX_FORWARD_DATA_BYTES = 256 * KiB;
/** Links frame (feature `link-list`): links listed at most, and the longest target listed (bytes). */
export const MAX_LISTED_LINKS = 128;
/** Ports one Ports frame lists at most (feature `ports`): the lowest ones, when more listen. */
export const MAX_LISTENING_PORTS = 256;
export const MAX_LISTED_URL_BYTES = 2048;
/** One listed link's fixed fields: row u16, col u16, cells u16, source u8, target length u16. */
export const LISTED_LINK_HEADER_BYTES = 9;

/** Control channel (section 7): one JSON message, length u32 whose first byte is 0, so at most 16 MiB - 1;
 * upstream limits requests to 4 MiB and so do we, in both directions. */
export const MAX_CONTROL_MESSAGE_BYTES = 4 * MiB;

/** Time a new connection has to deliver its first complete frame (section 1). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Chunked image transfers idle this long are dropped (section 4). */
export const TRANSFER_IDLE_MS = 5 * 60_000;
