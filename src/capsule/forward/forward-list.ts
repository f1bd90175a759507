/**
 * The live forwards the hosts announced (docs/protocol.md section 8.18, feature `forward-list` v1), for
 * `jackin-capsule ports` in the container: each announcement holds its connection open for the forwards'
 * life, and its entries go when that connection closes, however the host ended (Ctrl+C, a crash, SIGKILL).
 *
 * What is listed is a claim of whoever connected to the socket (the host, or a program in the container,
 * which could as well print a URL itself); it is read strictly and bounded, and the capsule acts on none of
 * it: it only tells it back to `ports`.
 */
import type { Socket } from 'node:net';
import type { Disposable } from '../../disposable.ts';
import { ANNOUNCE_FORWARDS_METHOD, PORTS_METHOD, type ListedForward } from '../../protocol/index.ts';
import { answer, refuse, type ControlMethods } from '../session/control-methods.ts';

/** Forwards listed at once; an announcement past it is refused (E_FORWARD_LIMIT) and lists nothing. */
export const MAX_LISTED_FORWARDS = 64;

export class ForwardList implements Disposable {
  readonly #byConnection = new Map<Socket, readonly ListedForward[]>();
  readonly #max: number;
  #count = 0;

  constructor(max = MAX_LISTED_FORWARDS) {
    this.#max = max;
  }

  /** Lists `forwards` until `connection` closes; false (nothing listed) when they do not fit or it is gone. */
  add(connection: Socket, forwards: readonly ListedForward[]): boolean {
    if (connection.destroyed || this.#byConnection.has(connection) || this.#count + forwards.length > this.#max) return false;
    this.#byConnection.set(connection, forwards);
    this.#count += forwards.length;
    connection.once('close', () => this.#remove(connection));
    return true;
  }

  /** Every listed forward, by host port then container port. */
  list(): ListedForward[] {
    return [...this.#byConnection.values()].flat().sort((a, b) => a.hostPort - b.hostPort || a.containerPort - b.containerPort);
  }

  /** Closes every announcing connection (the capsule shuts down: they must not hold its socket server open). */
  dispose(): void {
    for (const connection of [...this.#byConnection.keys()]) connection.destroy();
  }

  #remove(connection: Socket): void {
    const forwards = this.#byConnection.get(connection);
    if (forwards === undefined) return;
    this.#byConnection.delete(connection);
    this.#count -= forwards.length;
  }
}

/** Resolves when the host ends or drops the connection. */
function closedByHost(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed || socket.readableEnded) resolve();
    socket.once('end', () => resolve());
    socket.once('close', () => resolve());
  });
}

/** What the forward list needs of the capsule's server: its control methods, and a word when it shuts down. */
interface ForwardListServer {
  readonly control: ControlMethods;
  onShutdown(fn: () => void): void;
}

/**
 * Installs the forward list on the capsule's server: `announce-forwards` (a host lists its forwards) and
 * `ports` (the container reads them). The announcements it holds are closed when the server shuts down:
 * each stays open as long as its host's forward, and the server would otherwise wait for them.
 */
export function installForwardList(server: ForwardListServer): ForwardList {
  const list = new ForwardList();
  registerForwardListMethods(server.control, list);
  server.onShutdown(() => list.dispose());
  return list;
}

function registerForwardListMethods(control: ControlMethods, list: ForwardList): void {
  control.register(ANNOUNCE_FORWARDS_METHOD, ({ forwards }, socket) => {
    if (!list.add(socket, forwards))
      return refuse('E_FORWARD_LIMIT', `this capsule lists at most ${MAX_LISTED_FORWARDS} forwards; these ${forwards.length} are not listed`);
    // Held open for the forwards' life, outside the socket's 16 connections (the list bounds them itself);
    // nothing is read or timed on it, so an idle forward costs the capsule no wake-up.
    return answer({ listed: forwards.length }, { ownLimit: true, stream: closedByHost });
  });
  control.register(PORTS_METHOD, () => answer({ forwards: list.list() }));
}
