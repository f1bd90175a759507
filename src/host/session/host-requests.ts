/**
 * The session's decisions on host actions the container asked for or chose the target of, kept in one
 * place: the one gesture gate every feature consumes from (one gesture, one action), the operator's
 * switches (--allow-upstream-requests, JACKIN_CONFIRM), the host's confirmation prompt, and the host
 * action log. AttachSession delegates to it (FeatureSession's admitUpstream, confirm, logAction).
 */
import type { NoticeLevel } from '../../protocol/index.ts';
import { appendAction } from '../instances/action-log.ts';
import type { Disposable } from '../../disposable.ts';
import { ConfirmController } from './confirm-controller.ts';
import type { ConfirmRequest } from './confirm-prompt.ts';
import type { HostActionRecord } from './feature-session.ts';
import { SessionGestures, type HostRequestKind } from './gesture-gate.ts';
import { confirmCapsuleTargets, upstreamRequestsAllowed } from './host-request-policy.ts';
import { jackinHome } from '../instances/instances.ts';
import type { HostTerminal } from '../terminal/terminal.ts';

export interface HostRequestsOptions {
  /** Instance name, recorded with each action. */
  name: string;
  env: NodeJS.ProcessEnv;
  /** JACKIN_HOME for the log; default from env. */
  home?: string;
  allowUpstreamRequests?: boolean;
  terminal: Pick<HostTerminal, 'write' | 'size'>;
  /** The confirmation prompt closed (the caller repaints the program's screen). */
  confirmClosed: () => void;
  notify: (level: NoticeLevel, text: string) => void;
  /** Diagnostics (--verbose). */
  log?: (line: string) => void;
  /** True once the session ended: nothing is confirmed then. */
  ended: () => boolean;
}

export class HostRequests implements Disposable {
  readonly gestures = new SessionGestures();
  /** The host's confirmation prompt; while it is up, input goes to it and output is held. */
  readonly confirmer: ConfirmController;
  #logged: Promise<unknown> = Promise.resolve();

  readonly #o: HostRequestsOptions;
  constructor(o: HostRequestsOptions) {
    this.#o = o;
    this.confirmer = new ConfirmController({ terminal: o.terminal, closed: o.confirmClosed });
  }

  dispose(): void {
    this.confirmer.dispose();
  }

  logAction(record: HostActionRecord): void {
    this.#o.log?.(`host action ${record.action} ${record.target}: ${record.result}${record.detail === undefined ? '' : ` (${record.detail})`}`);
    // One append after the other, so the log keeps the order the actions happened in.
    const entry = { instance: this.#o.name, time: new Date().toISOString(), ...record };
    this.#logged = this.#logged.then(() => appendAction(this.#o.home ?? jackinHome(this.#o.env), entry));
  }

  /** Resolves once every action logged so far is in the log (jackin waits for it before it exits). */
  actionsLogged(): Promise<void> {
    return this.#logged.then(
      () => undefined,
      () => undefined,
    );
  }

  admitUpstream(kind: HostRequestKind, action: string, target: string): boolean {
    const refuse = (why: string): false => {
      this.#o.notify('warning', `Refused a request from the capsule (${action} ${target}): ${why}`);
      this.logAction({ action, target, result: 'refused', detail: why });
      return false;
    };
    if (!upstreamRequestsAllowed(this.#o.env, this.#o.allowUpstreamRequests === true)) {
      return refuse("this capsule did not negotiate jackin's extensions; allow its requests with --allow-upstream-requests");
    }
    if (!this.gestures.consume(kind)) return refuse('no palette key or click of yours was left for it (one gesture, one action)');
    return true;
  }

  confirm(request: ConfirmRequest): Promise<boolean> {
    if (this.#o.ended()) return Promise.resolve(false);
    if (!confirmCapsuleTargets(this.#o.env)) return Promise.resolve(true);
    return this.confirmer.ask(request);
  }
}
