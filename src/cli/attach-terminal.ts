/**
 * The attached session shared by `jackin attach` and `jackin run`: loads the session modules, puts the
 * operator's terminal in raw mode, runs the session and turns its outcome into jackin's exit status.
 */
import { describeError } from '../errors.ts';
import type { Transport } from '../transport/transport.ts';
import type { Selection } from '../transport/select.ts';
import { colourFromEnv, setHostColour } from '../ui/host-draw.ts';
import { inertText } from '../ui/inert-text.ts';
import { writeAll } from './command-kit.ts';

/** Longest reason (a capsule's Shutdown text, a relay's stderr line) shown on one line. */
const MAX_REASON_COLUMNS = 1000;

/**
 * The attached session's modules, loaded by `run` and `attach` only: `jackin export`, `ls` and `--help`
 * start without them (about a third of the CLI's start-up time). Both commands start loading them before
 * they connect, so the connection never waits on them: a program that exits at once would otherwise be
 * shut down while the capsule still waits for our Hello, and its status lost.
 */
export function loadSessionModules() {
  return Promise.all([
    import('../host/session/attach.ts'),
    import('../host/terminal/terminal.ts'),
    import('../host/paste/paste-feature.ts'),
    import('../host/links/link-feature.ts'),
    import('../host/export/export-feature.ts'),
    import('../host/copy/copy-feature.ts'),
    import('../host/forward/login-forward-feature.ts'),
    import('../host/forward/port-offers-feature.ts'),
    import('../host/instances/instances.ts'),
    import('../host/hints/hints-feature.ts'),
    import('../host/notify/notify-feature.ts'),
    import('../host/terminal/terminal-filter/filter.ts'),
    import('../host/platform/host-services.ts'),
    import('../host/session/keys-hint.ts'),
    import('../host/terminal/input-scan.ts'),
  ]);
}

export type SessionModules = ReturnType<typeof loadSessionModules>;

/** Attaches the process's terminal through `selection`; returns jackin's exit status. */
export async function attachTerminal(
  modules: SessionModules,
  selection: Selection,
  name: string,
  verbose: boolean,
  features: {
    noMouse?: boolean;
    connect?: () => Promise<Transport>;
    allowUpstreamRequests?: boolean;
    explainLost?: (message: string) => Promise<string | null>;
    /** The capsule's loopback is this host's (the embedded default): login callbacks need no forward. */
    sharedLoopback?: boolean;
    /**
     * No terminal (`jackin run` with stdin or stdout redirected): the program's bytes and nothing of the
     * host's on stdout, stdin passed to the program as data, its end as end of file; no raw mode.
     */
    plain?: boolean;
  } = {},
): Promise<number> {
  const [
    { AttachSession, outcomeExit },
    { HostTerminal, signalExitStatus },
    { installPasteFeature },
    { installLinkFeature },
    { installExportFeature },
    { installCopyFeature },
    { installLoginForwardFeature },
    { installPortOffersFeature, portOffersWanted },
    { jackinHome },
    { installHintsFeature },
    { installNotifyFeature },
    { filterOptionsFromEnv },
    { createHostServices },
    { keysHintEnabled, keysHintText },
    { scannerOptionsFromEnv },
  ] = await modules;
  // The palette, prompts and notices keep to bold, faint, underline and reverse video under NO_COLOR.
  setHostColour(colourFromEnv(process.env));
  // Program output reaches this terminal only through the host's filter (docs/terminal-policy.md).
  const terminal = new HostTerminal(undefined, filterOptionsFromEnv(process.env));
  // While raw, "\n" no longer returns the carriage: diagnostics end lines with CRLF. A line can quote the
  // container (a capsule's Notice or Shutdown text, a frame's content), so it is written inert.
  const log = verbose ? (line: string) => void process.stderr.write(`jackin: ${inertText(line, MAX_REASON_COLUMNS)}\r\n`) : undefined;
  log?.(`transport: ${selection.choice}, because ${selection.reason} (${selection.transport.description})`);
  const wantPorts = features.connect !== undefined && features.plain !== true && portOffersWanted(process.env, features.sharedLoopback === true);
  const session = new AttachSession({
    transport: selection.transport,
    terminal,
    name,
    allowUpstreamRequests: features.allowUpstreamRequests === true,
    ...(log ? { log } : {}),
    ...(features.plain !== true && keysHintEnabled(process.env) ? { keysHint: keysHintText(scannerOptionsFromEnv(process.env).paletteKey) } : {}),
    // A notice is a line on stderr: stdout carries only the program's bytes.
    ...(features.plain === true ? { plain: { report: (line: string) => void process.stderr.write(`jackin: ${inertText(line, MAX_REASON_COLUMNS)}\n`) } } : {}),
    // Ports the container opens are asked for only where its loopback is not ours and offers are on.
    ...(wantPorts ? {} : { withoutFeatures: ['ports'] as const }),
  });
  // What this host offers the affordances (opener, clipboard, notifier, export directory, the switches):
  // built once for the session, each at its first use, and shared by every affordance.
  const services = createHostServices({ env: process.env, writeTerminal: (b) => session.writeTerminal(b) });
  // Each affordance installs itself on the session, which disposes them all when it ends.
  // Images and host files (pasted paths, dropped files, copied file lists) on paste.
  session.install(
    installPasteFeature(session, { services, ...(features.connect !== undefined ? { connect: features.connect } : {}), ...(log ? { record: log } : {}) }),
  );
  const exportFeature =
    features.connect !== undefined ? session.install(installExportFeature(session, { instance: name, connect: features.connect, services })) : undefined;
  const links = session.install(
    installLinkFeature(session, {
      services,
      noMouse: features.noMouse === true,
      // A modifier-click on a file path (not a link) exports that file.
      ...(exportFeature !== undefined ? { exportFeature } : {}),
    }),
  );
  session.install(installCopyFeature(session, { services }));
  // Opening a login link whose callback is on the container's loopback forwards that port for the callback.
  const loginForward = session.install(
    installLoginForwardFeature(session, {
      instance: name,
      home: jackinHome(),
      env: services.env,
      sharedLoopback: features.sharedLoopback === true,
      ...(features.connect !== undefined ? { connect: features.connect } : {}),
    }),
  );
  // Ports programs open in the container: a notice and a palette entry each, forwarded on the operator's choice.
  const portOffers = wantPorts
    ? session.install(
        installPortOffersFeature(session, { instance: name, home: jackinHome(), ...(features.connect !== undefined ? { connect: features.connect } : {}) }),
      )
    : undefined;
  // Link hints: the links on the screen labelled, one opened (or copied) by typing its label.
  // A hinted link that fails to open can be copied with the links feature's Copy link not opened.
  session.install(installHintsFeature(session, { services, keepFailed: links.keepFailed, ...(log ? { log } : {}) }));
  // Program notifications (OSC 9/99/777, and the bell while unfocused if asked for) on the host desktop.
  session.install(installNotifyFeature(session, { instance: name, services, ...(log ? { log } : {}) }));

  // On a terminal the reason starts on a line of its own (the program's last line may be unfinished);
  // redirected to a file or a pipe it is just the one line.
  const reasonLine = (message: string): string => `${process.stderr.isTTY === true ? '\r\n' : ''}jackin: ${inertText(message, MAX_REASON_COLUMNS)}\n`;
  const fail = (message: string, status: number) => {
    session.abort(message);
    terminal.restore();
    process.stderr.write(reasonLine(message), () => process.exit(status));
    // If stderr is gone (hangup), do not wait on it.
    setTimeout(() => process.exit(status), 500).unref();
  };
  terminal.onFatalSignal((sig) => fail(`terminated by ${sig}`, signalExitStatus(sig)));
  const onCrash = (e: unknown) => fail(`internal error: ${describeError(e)}`, 70);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);

  if (features.plain !== true) terminal.enterRawMode();
  if (features.plain !== true) terminal.holdAltScreen(process.env);
  if (features.plain !== true && process.stdin.isTTY === true && process.stdout.isTTY === true && !terminal.outputRaw)
    log?.("could not turn output processing off (stty -opost); the program's output passes through the terminal's own");
  let outcome;
  try {
    outcome = await session.start();
  } finally {
    terminal.restore();
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  }
  // jackin exits once this returns: a login forward still open (a detach, the program's exit) is closed,
  // logged and unrecorded first, and every action of the session is in the log.
  await loginForward.close();
  await portOffers?.close();
  await session.actionsLogged();
  const exit = outcomeExit(outcome, name);
  let message = exit.message;
  // A lost connection whose cause the caller can name (a container that stopped) gets that one line instead.
  if (outcome.kind === 'lost' && features.explainLost !== undefined && message !== null)
    message = (await features.explainLost(message).catch(() => null)) ?? message;
  const status = exit.status;
  // The reason may be the capsule's Shutdown text or a relay's last stderr line: container text.
  if (message !== null) await writeAll(process.stderr, reasonLine(message));
  return status;
}

/** The --no-mouse option of `attach` and `run`. */
export const NO_MOUSE_HELP = 'never capture the mouse (no Ctrl/Alt+click on links; the palette still works; also JACKIN_MOUSE=off)';
