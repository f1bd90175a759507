/**
 * Reads a registry tarball (.tgz) and writes the entries asked for, refusing any tarball that holds an
 * entry jackin would not write as it says: a path that is absolute or climbs out (`..`), a symbolic or hard
 * link, a device, a FIFO. The whole tarball is checked, not only the entries kept, so a hostile one is
 * refused as a whole. Like npm, the first path component (`package/`) is dropped.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { dirname, join, relative, isAbsolute } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createRequire } from 'node:module';
import type TarStream from 'tar-stream';
import { JackinError } from '../../errors.ts';
import { nodeZlib } from '../../lazy-builtins.ts';

// Required, not imported: a bundle would hoist an import and load it for every jackin command.
const tarStream = (): typeof TarStream => createRequire(import.meta.url)('tar-stream') as typeof TarStream;

/** The entry's path without its first component, or a reason it is refused. */
export function entryPath(name: string): { path: string } | { refused: string } {
  if (name.includes('\0')) return { refused: 'a NUL in its path' };
  if (name.includes('\\')) return { refused: 'a backslash in its path' };
  if (name.startsWith('/')) return { refused: 'an absolute path' };
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return { refused: 'a path that climbs out (..)' };
  return { path: parts.slice(1).join('/') };
}

export interface ExtractOptions {
  /** The tarball, for messages. */
  readonly label: string;
  /** Where an entry (its path without `package/`) goes, relative to `dest`; null skips it. */
  readonly select: (path: string) => string | null;
  readonly dest: string;
}

/** Extracts the selected files of the .tgz `file` into `dest`; returns the relative paths written. */
export async function extractTarball(file: string, opts: ExtractOptions): Promise<string[]> {
  const written: string[] = [];
  const extract = tarStream().extract();
  const refuse = (name: string, why: string): JackinError =>
    new JackinError('E_RUNTIME_TARBALL', `${opts.label}: the tarball holds ${JSON.stringify(name.slice(0, 200))}, ${why}: it is not used`);
  extract.on('entry', (header, stream, next) => {
    const done = (e?: unknown): void => {
      if (e !== undefined) {
        // The entry's stream ends with the extract's error: that one reaches the caller through the pipeline.
        stream.on('error', () => {});
        extract.destroy(e as Error);
      } else next();
    };
    const p = entryPath(header.name);
    if ('refused' in p) return done(refuse(header.name, p.refused));
    if (header.type !== 'file' && header.type !== 'directory') return done(refuse(header.name, `a ${header.type ?? 'unknown'} entry`));
    const to = header.type === 'file' && p.path !== '' ? opts.select(p.path) : null;
    if (to === null) {
      stream.on('end', () => done());
      stream.resume();
      return;
    }
    const target = join(opts.dest, to);
    const rel = relative(opts.dest, target);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return done(refuse(header.name, 'a path outside the runtime'));
    const mode = ((header.mode ?? 0o644) & 0o111) !== 0 ? 0o755 : 0o644;
    mkdir(dirname(target), { recursive: true })
      .then(() => pipeline(stream, createWriteStream(target, { mode, flags: 'wx' })))
      // Exactly this mode, whatever the umask: the container's user reads (and runs) these.
      .then(() => chmod(target, mode))
      .then(() => {
        written.push(to);
        done();
      }, done);
  });
  try {
    await pipeline(createReadStream(file), nodeZlib().createGunzip(), extract);
  } catch (e) {
    if (e instanceof JackinError) throw e;
    throw new JackinError('E_RUNTIME_TARBALL', `${opts.label}: the tarball cannot be read (${e instanceof Error ? e.message : String(e)})`, { cause: e });
  }
  return written;
}
