/**
 * What the host machine offers the affordances of one attach session, built once for the session and
 * handed to every affordance: the opener, the clipboard's reader and text writer, the desktop notifier, the
 * export directory, and the `JACKIN_*` switches they read (the environment). Each service is built at its
 * first use (some start processes or read files to choose a backend), then kept: the links, hints and
 * exports share one opener (and its rate limit), copies and hint copies one text writer.
 */
import type { ClipboardReader } from './clipboard/types.ts';
import { selectClipboardReader } from './clipboard/select.ts';
import { selectTextWriter, type ClipboardTextWriter } from './clipboard/write-text.ts';
import { exportDirectory } from './download-dir.ts';
import { createNotifier, type Notifier } from './notifier.ts';
import { createOpener, type Opener } from './opener.ts';

export interface HostServices {
  /** The switches (`JACKIN_*`) and the environment the platform's tools run with. */
  readonly env: NodeJS.ProcessEnv;
  /** Opens links and files on the host (JACKIN_OPENER, else the platform's). */
  readonly opener: Opener;
  /** The host clipboard's reader (JACKIN_CLIPBOARD_* and the platform). */
  readonly clipboardReader: ClipboardReader;
  /** The host clipboard's text writer (the platform's, or OSC 52 to the operator's terminal). */
  readonly textWriter: ClipboardTextWriter;
  /** The desktop notifier; throws E_NOTIFIER_CONFIG (each time asked) for a bad JACKIN_NOTIFIER. */
  readonly notifier: Notifier;
  /** Where an instance's exports go: `<downloads>/jackin/<instance>/` (JACKIN_DOWNLOAD_DIR, XDG, ~/Downloads). */
  exportDirectory(instance: string): Promise<string>;
}

export interface HostServicesOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Writes to the operator's terminal (the text writer's OSC 52 fallback); needed only for `textWriter`. */
  readonly writeTerminal?: (bytes: Buffer) => void;
  /** Operator-configured extra URL schemes the opener accepts. */
  readonly extraSchemes?: readonly string[];
}

/** Builds `make()` at the first call and returns the same value (or throws the same error) after. */
function once<T>(make: () => T): () => T {
  let built: { value: T } | { error: unknown } | undefined;
  return () => {
    built ??= (() => {
      try {
        return { value: make() };
      } catch (error) {
        return { error };
      }
    })();
    if ('error' in built) throw built.error;
    return built.value;
  };
}

export function createHostServices(o: HostServicesOptions): HostServices {
  const env = o.env ?? process.env;
  const opener = once(() => createOpener({ env, ...(o.extraSchemes === undefined ? {} : { extraSchemes: o.extraSchemes }) }));
  const reader = once(() => selectClipboardReader(env));
  const writer = once(() => {
    if (o.writeTerminal === undefined) throw new TypeError("a clipboard text writer needs the operator's terminal (writeTerminal)");
    return selectTextWriter(env, o.writeTerminal);
  });
  const notifier = once(() => createNotifier({ env }));
  return {
    env,
    get opener() {
      return opener();
    },
    get clipboardReader() {
      return reader();
    },
    get textWriter() {
      return writer();
    },
    get notifier() {
      return notifier();
    },
    exportDirectory: (instance) => exportDirectory(instance, undefined, env),
  };
}
