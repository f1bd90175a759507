/**
 * The host's half of the attach handshake (protocol.md section 6): the Hello it sends, and the extensions
 * it announces in ExtHello after the capsule's Welcome offered its own.
 */
import type { ClientFrame, FeatureName, Features, FeatureVersions } from '../../protocol/index.ts';

/** Extensions this host uses, with the version it speaks. */
export const HOST_FEATURES: FeatureVersions = {
  'exit-status': 1,
  notice: 1,
  repaint: 1,
  'image-staged': 1,
  'stage-only': 1,
  resolve: 1,
  modes: 1,
  'file-stage': 1,
  forward: 1,
  'link-list': 1,
  'held-replies': 1,
  'forward-list': 1,
  ports: 1,
};

/**
 * Picks the features to announce: ours that the capsule offers, at the lower of the two versions, but for
 * those this session does not want (`ports` where the capsule's loopback is the host's own, or offers off).
 */
export function negotiateFeatures(offered: Features, without: readonly FeatureName[] = []): Features {
  const out: Features = {};
  for (const [name, version] of Object.entries(HOST_FEATURES)) {
    if ((without as readonly string[]).includes(name)) continue;
    const theirs = offered[name];
    if (theirs !== undefined && theirs > 0) out[name] = Math.min(version, theirs);
  }
  return out;
}

/** The Hello for a terminal of this size, with the TERM fields of `env`. */
export function helloFrame(size: { rows: number; cols: number }, env: NodeJS.ProcessEnv): ClientFrame {
  const unset = 'unset' as const;
  return {
    type: 'Hello',
    rows: size.rows,
    cols: size.cols,
    spawn: { kind: 'none' },
    env: [],
    focus: null,
    term: env['TERM'] || null,
    termProgram: env['TERM_PROGRAM'] || null,
    colorTerm: env['COLORTERM'] || null,
    fg: null,
    bg: null,
    caps: { pointerShapes: unset, truecolor: unset, synchronizedOutput: unset, osc8: unset, underlineStyle: unset, imageProtocol: unset },
    context: null,
  };
}
