/**
 * Host files that are never staged into a capsule, whatever the operator pasted: well-known credential
 * locations and files named like secrets. A pure decision on a path's components (no home directory
 * needed: `.ssh` is refused under any user's home, root's included); the caller applies it to the path as
 * given and to the path its symlinks resolve to.
 */

/** Directories whose every file is a secret, as component sequences. */
const SECRET_DIRS: ReadonlyArray<readonly string[]> = [
  ['.ssh'],
  ['.gnupg'],
  ['.aws'],
  ['.kube'],
  ['.azure'],
  ['.password-store'],
  ['.config', 'gcloud'],
  ['.local', 'share', 'keyrings'],
  ['Library', 'Keychains'],
];

/** Exact files, as component sequences ending in the file name. */
const SECRET_FILES: ReadonlyArray<readonly string[]> = [
  ['.docker', 'config.json'],
  ['.netrc'],
  ['.pgpass'],
  ['.git-credentials'],
  ['.npmrc'],
  ['.pypirc'],
  ['etc', 'shadow'],
  ['etc', 'gshadow'],
];

/** File names that hold keys or secrets wherever they are. */
const SECRET_NAMES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^id_(rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)$/, 'an SSH private key'],
  [/\.(pem|key|p12|pfx|jks|keystore|kdbx|keychain|keychain-db|gpg|asc)$/i, 'a key or keystore file'],
  [/^\.env(\.(?!example$|sample$|template$|dist$)[^/]+)?$/, 'an environment file (.env)'],
  [/^(credentials|secrets?)(\.(json|ya?ml|toml))?$/i, 'a credentials file'],
];

function containsSequence(parts: readonly string[], seq: readonly string[], atEnd: boolean): boolean {
  for (let i = 0; i + seq.length <= parts.length; i++) {
    if (atEnd && i + seq.length !== parts.length) continue;
    if (seq.every((s, k) => parts[i + k] === s)) return true;
  }
  return false;
}

/** Why the absolute `path` must never be staged, or null when it may be. */
export function secretReason(path: string): string | null {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  for (const dir of SECRET_DIRS) {
    // The directory itself or anything under it (the last component alone would be the directory).
    if (containsSequence(parts, dir, false)) return `it is under ${dir.join('/')}, a credentials directory`;
  }
  for (const file of SECRET_FILES) {
    if (containsSequence(parts, file, true)) return `${file.join('/')} holds credentials`;
  }
  const name = parts.at(-1) ?? '';
  for (const [re, what] of SECRET_NAMES) if (re.test(name)) return `${name} is named like ${what}`;
  return null;
}
