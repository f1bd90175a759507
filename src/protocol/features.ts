import type { Features } from './frames.ts';
import { PROTOCOL_CODES } from './protocol-error.ts';
import type { PayloadReader } from './payload-reader.ts';

/**
 * The feature list that negotiates extensions (docs/protocol.md, "Extensions"):
 *   version u8 (=1) | count u8 | count × (name length u8 (1..32) | name [a-z0-9-] | feature version u16)
 * In Welcome it follows the magic bytes "JX" after the session count; in ExtHello it is the whole payload.
 */
const FEATURE_LIST_VERSION = 1;
export const WELCOME_EXTENSION_MAGIC = Buffer.from('JX', 'ascii');
const MAX_FEATURES = 64;
const MAX_FEATURE_NAME = 32;
const NAME = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Every extension this project defines (docs/protocol.md, "Extensions"). The host's HOST_FEATURES and the
 * capsule's CAPSULE_FEATURES are typed from this list, so a name is added, renamed or dropped in one place.
 */
const FEATURE_NAMES = [
  'exit-status',
  'notice',
  'repaint',
  'image-staged',
  'stage-only',
  'resolve',
  'modes',
  'file-stage',
  'forward',
  'link-list',
  'held-replies',
  'forward-list',
  'ports',
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];
/** The extensions one side speaks, each with the version it speaks. */
export type FeatureVersions = Readonly<Record<FeatureName, number>>;

/** Whether a feature list (offered or agreed; null for an upstream peer) has `name`. */
export function hasFeature(features: Features | null, name: FeatureName): boolean {
  return features?.[name] !== undefined;
}

function isFeatureName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_FEATURE_NAME && NAME.test(name);
}

export function encodeFeatureList(features: Features): Buffer {
  const entries = Object.entries(features);
  if (entries.length > MAX_FEATURES) throw new RangeError(`too many features: ${entries.length} > ${MAX_FEATURES}`);
  const parts: Buffer[] = [Buffer.from([FEATURE_LIST_VERSION, entries.length])];
  for (const [name, version] of entries) {
    if (!isFeatureName(name)) throw new RangeError(`invalid feature name ${JSON.stringify(name)}`);
    if (!Number.isInteger(version) || version < 0 || version > 0xffff) {
      throw new RangeError(`invalid version ${version} for feature ${name}`);
    }
    const b = Buffer.alloc(1 + name.length + 2);
    b[0] = name.length;
    b.write(name, 1, 'ascii');
    b.writeUInt16BE(version, 1 + name.length);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

export function readFeatureList(r: PayloadReader): Features {
  const version = r.u8('feature list version');
  if (version !== FEATURE_LIST_VERSION) r.fail(PROTOCOL_CODES.badExtensions, `feature list version ${version} is not ${FEATURE_LIST_VERSION}`);
  const count = r.u8('feature count');
  if (count > MAX_FEATURES) r.fail(PROTOCOL_CODES.badExtensions, `feature count ${count} exceeds ${MAX_FEATURES}`);
  const out: Features = {};
  for (let i = 0; i < count; i++) {
    const n = r.u8('feature name length');
    const name = r.bytes(n, 'feature name').toString('latin1');
    if (!isFeatureName(name)) r.fail(PROTOCOL_CODES.badExtensions, `invalid feature name ${JSON.stringify(name)}`);
    if (Object.hasOwn(out, name)) r.fail(PROTOCOL_CODES.badExtensions, `duplicate feature ${name}`);
    out[name] = r.u16('feature version');
  }
  return out;
}
