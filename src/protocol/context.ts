import type { AttachContext } from './frames.ts';
import { CONTEXT_MAX_SESSION_ID } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STRING_FIELDS = ['traceparent', 'tracestate', 'invocation_id', 'session_id', 'job_id'] as const;

/**
 * Validates a parsed context value (protocol.md section 3.8): an object `{"v":1, ...}` with only the known
 * optional string fields. Returns the context or a reason it is invalid.
 */
export function validateContext(value: unknown): { ok: true; context: AttachContext } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'context is not an object' };
  }
  const obj = value as Record<string, unknown>;
  if (obj['v'] !== 1) return { ok: false, reason: `context version ${JSON.stringify(obj['v'])} is not 1` };
  for (const key of Object.keys(obj)) {
    if (key !== 'v' && !(STRING_FIELDS as readonly string[]).includes(key)) {
      return { ok: false, reason: `unknown context field ${JSON.stringify(key)}` };
    }
  }
  for (const key of STRING_FIELDS) {
    const v = obj[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') return { ok: false, reason: `context field ${key} is not a string` };
    if ((key === 'invocation_id' || key === 'job_id') && !UUID.test(v)) {
      return { ok: false, reason: `context field ${key} is not a UUID` };
    }
    if (key === 'session_id') {
      const n = Buffer.byteLength(v, 'utf8');
      if (n < 1 || n > CONTEXT_MAX_SESSION_ID) return { ok: false, reason: `context session_id length ${n} is outside 1..64` };
    }
  }
  return { ok: true, context: obj as unknown as AttachContext };
}
