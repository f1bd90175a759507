import { ControlMessageDecoder, encodeControlRequest, type ControlMethod } from '../protocol/index.ts';
import { JackinError } from '../errors.ts';
import { connectSocket } from './socket.ts';

/** A control request is one small JSON reply; a capsule that takes longer is wedged. */
const CONTROL_REQUEST_TIMEOUT_MS = 2_000;

/**
 * Sends one control-channel request (protocol.md section 7) on a Unix socket and returns the first reply as
 * it came: the caller reads it with `readControlReply(method, reply)`, after telling a capsule that does not
 * answer (these errors) from one that answers wrong.
 */
export async function controlRequest<Name extends string, Params>(
  socketPath: string,
  method: ControlMethod<Name, Params, unknown, unknown>,
  params: Params,
  { timeoutMs = CONTROL_REQUEST_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<unknown> {
  const sock = await connectSocket(socketPath, { timeoutMs });
  return new Promise((resolve, reject) => {
    const decoder = new ControlMessageDecoder();
    const done = (err: Error | null, value?: unknown) => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(() => done(new JackinError('E_CONTROL_TIMEOUT', `no control reply from ${socketPath} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('data', (chunk: Buffer) => {
      try {
        const [first] = decoder.push(chunk);
        if (first !== undefined) done(null, first);
      } catch (e) {
        done(new JackinError('E_CONTROL_REPLY', `bad control reply from ${socketPath}: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
      }
    });
    sock.on('error', (e) => done(new JackinError('E_CONTROL_REPLY', `control request to ${socketPath} failed: ${e.message}`, { cause: e })));
    sock.on('end', () => done(new JackinError('E_CONTROL_REPLY', `${socketPath} closed the control channel without a reply`)));
    sock.write(encodeControlRequest(method, params));
  });
}
