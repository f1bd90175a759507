/**
 * Methods of the control channel (protocol.md section 7): one JSON request per connection, one JSON reply,
 * optionally followed by a stream the method writes itself (how `export` will travel). Methods are
 * registered by name so later features add theirs without touching the server.
 */
import type { Socket } from 'node:net';
import { JackinError, type ErrorCode } from '../../errors.ts';

export type ControlReply = { ok: true; [key: string]: unknown } | { ok: false; code: ErrorCode; message: string };

export interface ControlOutcome {
  reply: ControlReply;
  /** Runs after the reply was written, with the connection; the connection ends when it settles. */
  stream?: (socket: Socket) => Promise<void>;
  /**
   * The method bounds its streams itself (forwards: MAX_CAPSULE_FORWARDS): the connection then stops counting
   * against the server's MAX_CONNECTIONS, which is kept for attach and short control connections.
   */
  ownLimit?: true;
}

export interface ControlRequest {
  method: string;
  [key: string]: unknown;
}

export type ControlMethod = (request: ControlRequest, socket: Socket) => ControlOutcome | Promise<ControlOutcome>;

export class ControlMethods {
  private readonly methods = new Map<string, ControlMethod>();

  register(name: string, method: ControlMethod): void {
    if (this.methods.has(name)) throw new RangeError(`control method ${name} is already registered`);
    this.methods.set(name, method);
  }

  /** Validates and runs one request; never throws (failures become `ok:false` replies). */
  async dispatch(request: unknown, socket: Socket): Promise<ControlOutcome> {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      return fail('E_BAD_REQUEST', 'control request must be a JSON object like {"method":"status"}');
    }
    const method = (request as Record<string, unknown>)['method'];
    if (typeof method !== 'string') {
      return fail('E_BAD_REQUEST', 'control request has no string "method" field');
    }
    const fn = this.methods.get(method);
    if (!fn) {
      const known = [...this.methods.keys()].sort().join(', ');
      return fail('E_UNKNOWN_METHOD', `unknown control method ${JSON.stringify(method)}; this capsule knows: ${known}`);
    }
    try {
      return await fn(request as ControlRequest, socket);
    } catch (e) {
      // A system error's errno (ENOENT…) stays in the message: only project codes travel as codes.
      const code = e instanceof JackinError ? e.code : 'E_INTERNAL';
      return fail(code, `control method ${method} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

function fail(code: ErrorCode, message: string): ControlOutcome {
  return { reply: { ok: false, code, message } };
}
