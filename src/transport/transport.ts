import type { Readable, Writable } from 'node:stream';
import type { BorrowedReads } from './borrowed-reads.ts';

/** What a caller may ask of a new connection. */
export interface ConnectOptions {
  /** Read a socket into this one lent buffer (borrowed-reads.ts); a relay ignores it. */
  readonly borrowedReads?: BorrowedReads;
}

/** Opens a new connection to the capsule. */
export type Connect = (options?: ConnectOptions) => Promise<Transport>;

/**
 * A byte stream to a capsule, whatever carries it (a Unix socket or an exec relay). Callers never learn
 * which engine is underneath; they read `readable`, write `writable`, and `close()` when done.
 */
export interface Transport {
  readonly kind: 'socket' | 'relay';
  /** Bytes from the capsule; through `borrowedReads.chunks(readable)` instead when that is set. */
  readonly readable: Readable;
  /** The lent read buffer this connection reads into (ConnectOptions.borrowedReads), when it honoured one. */
  readonly borrowedReads?: BorrowedReads;
  /** Bytes to the capsule. */
  readonly writable: Writable;
  /** What carries the bytes, for --verbose and error messages ("socket /x/jackin.sock", "docker exec -i ..."). */
  readonly description: string;
  /** Ends the connection: destroys the socket or terminates the relay. Idempotent. */
  close(): void;
  /**
   * Why the carrier failed, when it knows more than "the stream ended" (for a relay: its exit status and
   * the last line it wrote on stderr). Null when nothing is known. For a relay, resolves once it has exited.
   */
  failureDetail(): Promise<string | null>;
}
