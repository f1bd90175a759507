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
  /** Writes to the operator's terminal (the text writer's OSC 52 fallback, the terminal clipboard's questions). */
  readonly writeTerminal?: (bytes: Buffer) => void;
  /** Operator-configured extra URL schemes the opener accepts. */
  readonly extraSchemes?: readonly string[];
}

/** Builds `make()` at the first read of `value` and gives the same value (or throws the same error) after. */
class Lazy<T> {
  readonly #make: () => T;
  #built: { value: T } | { error: unknown } | undefined;

  constructor(make: () => T) {
    this.#make = make;
  }

  get value(): T {
    this.#built ??= this.#build();
    if ('error' in this.#built) throw this.#built.error;
    return this.#built.value;
  }

  #build(): { value: T } | { error: unknown } {
    try {
      return { value: this.#make() };
    } catch (error) {
      return { error };
    }
  }
}

export function createHostServices(o: HostServicesOptions): HostServices {
  return new SessionHostServices(o);
}

class SessionHostServices implements HostServices {
  readonly env: NodeJS.ProcessEnv;
  readonly #opener: Lazy<Opener>;
  readonly #reader: Lazy<ClipboardReader>;
  readonly #writer: Lazy<ClipboardTextWriter>;
  readonly #notifier: Lazy<Notifier>;

  constructor(o: HostServicesOptions) {
    const env = o.env ?? process.env;
    this.env = env;
    this.#opener = new Lazy(() => createOpener({ env, ...(o.extraSchemes === undefined ? {} : { extraSchemes: o.extraSchemes }) }));
    // The terminal backend asks the operator's terminal (OSC 5522), so it needs to write to it.
    this.#reader = new Lazy(() => selectClipboardReader(env, undefined, o.writeTerminal === undefined ? undefined : { write: o.writeTerminal }));
    this.#writer = new Lazy(() => {
      if (o.writeTerminal === undefined) throw new TypeError("a clipboard text writer needs the operator's terminal (writeTerminal)");
      return selectTextWriter(env, o.writeTerminal);
    });
    this.#notifier = new Lazy(() => createNotifier({ env }));
  }

  get opener(): Opener {
    return this.#opener.value;
  }

  get clipboardReader(): ClipboardReader {
    return this.#reader.value;
  }

  get textWriter(): ClipboardTextWriter {
    return this.#writer.value;
  }

  get notifier(): Notifier {
    return this.#notifier.value;
  }

  exportDirectory(instance: string): Promise<string> {
    return exportDirectory(instance, undefined, this.env);
  }
}
