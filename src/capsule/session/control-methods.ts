/**
 * Methods of the control channel (protocol.md section 7): one JSON request per connection, one JSON reply,
 * optionally followed by a stream the method writes itself (how `export` travels). Each method is registered
 * with its descriptor (src/protocol/control-methods.ts), which reads the request into typed params and
 * writes the typed reply, so later features add theirs without touching the server.
 */
import type { Socket } from 'node:net';
import { JackinError, type ErrorCode } from '../../errors.ts';
import { controlReplyMessage, requestedMethod, type ControlMethod, type ControlRequestObject } from '../../protocol/index.ts';

/** A reply as it goes on the wire. */
type ControlReply = { ok: true; [key: string]: unknown } | { ok: false; code: ErrorCode; message: string };

interface Continuation {
  /** Runs after the reply was written, with the connection; the connection ends when it settles. */
  stream?: (socket: Socket) => Promise<void>;
  /**
   * The method bounds its streams itself (forwards: MAX_CAPSULE_FORWARDS): the connection then stops counting
   * against the server's MAX_CONNECTIONS, which is kept for attach and short control connections.
   */
  ownLimit?: true;
}

/** What the server does with one request: the reply to write, and what follows it. */
export interface ControlOutcome extends Continuation {
  reply: ControlReply;
}

/** A method's answer: its reply (and what follows it), or a refusal `{"ok":false,code,message}`. */
export type ControlAnswer<Reply> = ({ ok: true; reply: Reply } & Continuation) | { ok: false; code: ErrorCode; message: string };

export function answer<Reply>(reply: Reply, then: Continuation = {}): ControlAnswer<Reply> {
  return { ok: true, reply, ...then };
}

export function refuse(code: ErrorCode, message: string): ControlAnswer<never> {
  return { ok: false, code, message };
}

export type ControlHandler<Params, Reply> = (params: Params, socket: Socket) => ControlAnswer<Reply> | Promise<ControlAnswer<Reply>>;

type Dispatch = (request: ControlRequestObject, socket: Socket) => Promise<ControlOutcome>;

export class ControlMethods {
  readonly #methods = new Map<string, Dispatch>();

  /** Serves `method`: its requests are read by the descriptor, and only a request it accepts reaches `handler`. */
  register<Name extends string, Params, Reply>(method: ControlMethod<Name, Params, Reply, unknown>, handler: ControlHandler<Params, Reply>): void {
    const name = method.method;
    if (this.#methods.has(name)) throw new RangeError(`control method ${name} is already registered`);
    this.#methods.set(name, async (request, socket) => {
      const parsed = method.parseParams(request);
      if (!parsed.ok) return fail(parsed.code, parsed.message);
      const a = await handler(parsed.params, socket);
      if (!a.ok) return fail(a.code, a.message);
      return {
        reply: controlReplyMessage(method, a.reply),
        ...(a.stream !== undefined ? { stream: a.stream } : {}),
        ...(a.ownLimit !== undefined ? { ownLimit: a.ownLimit } : {}),
      };
    });
  }

  /** Validates and runs one request; never throws (failures become `ok:false` replies). */
  async dispatch(value: unknown, socket: Socket): Promise<ControlOutcome> {
    const named = requestedMethod(value);
    if (!named.ok) return fail('E_BAD_REQUEST', named.message);
    const { method, request } = named;
    const fn = this.#methods.get(method);
    if (!fn) {
      const known = [...this.#methods.keys()].sort().join(', ');
      return fail('E_UNKNOWN_METHOD', `unknown control method ${JSON.stringify(method)}; this capsule knows: ${known}`);
    }
    try {
      return await fn(request, socket);
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
