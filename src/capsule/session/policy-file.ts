/**
 * Reads the export policy file at capsule start (policy/load.ts validates; this module does the I/O). The
 * shipped default lives in the package's `policies/default.json`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JackinError } from '../../errors.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { MAX_POLICY_TEXT_BYTES, parsePolicy } from '../../policy/load.ts';
import type { Policy } from '../../policy/schema.ts';

const DEFAULT_POLICY_PATH = join(PACKAGE_ROOT, 'policies', 'default.json');

/** Loads and validates a policy file; E_POLICY_INVALID (naming the key) or E_POLICY_READ. */
export async function loadPolicyFile(path: string = DEFAULT_POLICY_PATH): Promise<Policy> {
  let text: string;
  try {
    const buf = await readFile(path);
    if (buf.length > MAX_POLICY_TEXT_BYTES) {
      throw new JackinError('E_POLICY_INVALID', `policy ${path}: ${buf.length} bytes, at most ${MAX_POLICY_TEXT_BYTES}`);
    }
    text = buf.toString('utf8');
  } catch (e) {
    if (e instanceof JackinError) throw e;
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new JackinError('E_POLICY_READ', `cannot read policy ${path} (${code}); pass an existing file with --policy`, { cause: e });
  }
  return parsePolicy(text, path);
}
