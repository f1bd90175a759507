/**
 * Frame dispatch of one attach connection after its Hello: every client frame type has its case here
 * (the switch is exhaustive, so a new frame type in protocol/frames.ts does not compile until it is
 * handled); the image operations, in either frame form, go to the image sink through one function.
 * Handlers reach the connection only through FrameContext: `send` for any server frame, `respond` for an
 * AttachControlResponse, `notify` for the operator.
 */
import {
  assertNever,
  type AttachContext,
  type ClientFrame,
  type ControlResult,
  type Features,
  type NoticeLevel,
  type ServerFrame,
} from '../../protocol/index.ts';
import type { AttachHandshake } from './attach-handshake.ts';
import type { AttachInput } from './attach-input.ts';
import type { AttachShutdown } from './attach-shutdown.ts';
import { imageOp, isImageBody, isImageFrame, type ImageFrame, type ImageBody, type ImageReplies, type ImageSink } from './image-sink.ts';
import type { Offers } from './offers.ts';
import type { PasteScanner } from './paste-scanner.ts';
import { resolveRequest } from './resolver.ts';
import type { Session } from '../session/session.ts';

/** What a frame handler may use of the server that holds its connection (AttachHost is the whole of it). */
export interface DispatchHost {
  readonly session: Session;
  readonly features: Features;
  readonly imageSink: ImageSink;
  /** Link and file offers, read by Resolve requests. */
  readonly offers: Offers;
  /** Remembers the text pasted last (bracketed) for the clipboard shims; absent in tests that need none. */
  readonly pasted?: PasteScanner;
  log(line: string): void;
}

/** What a frame handler may use of its connection. */
export interface FrameContext {
  readonly id: number;
  readonly host: DispatchHost;
  readonly handshake: AttachHandshake;
  readonly shutdown: AttachShutdown;
  readonly input: AttachInput;
  /** Answers of the image sink on this connection. */
  readonly replies: ImageReplies;
  /** Sends any server frame (pending output goes first); nothing once the socket is ending. */
  send(frame: ServerFrame): void;
  /** One AttachControlResponse (not after close). */
  respond(requestId: bigint, result: ControlResult): void;
  /** Tells the operator (a Notice frame, or the capsule's overlay for a host that draws none). */
  notify(level: NoticeLevel, text: string): void;
  /** Handles later frames only after `step` (the socket is not read meanwhile). */
  runExclusive(step: () => Promise<void>): void;
  /** A repaint from the settled model (with the PTY held). */
  repaint(): Promise<void>;
  /** Modes, to a host that negotiated them. */
  sendModes(): void;
  /** The host holds the program's output (true) or no more: the session answers its queries, from the RepliesHeld sent here on. */
  holdReplies(held: boolean): void;
  /** Tells this host the ports programs listen on (feature `ports`): now, and after output while it stays. */
  watchPorts(): void;
}

type ControlFrame = Extract<ClientFrame, { type: 'AttachControl' }>;

export function dispatchFrame(f: ClientFrame, c: FrameContext): void {
  const { host, shutdown } = c;
  // The program is gone and only ExtHello is awaited (see attach-shutdown.ts).
  if (shutdown.awaitingExtHello && f.type !== 'ExtHello') return;
  if (isImageFrame(f)) {
    image(c, f, null, null);
    return;
  }
  switch (f.type) {
    case 'Hello':
      host.log(`client ${c.id}: ignored a second Hello`);
      return;
    case 'Resize':
      host.session.resize(f.rows, f.cols);
      return;
    case 'Input':
      host.pasted?.push(f.bytes);
      c.input.write(f.bytes);
      return;
    case 'Command':
      // Reserved by upstream; upstream capsules ignore it too.
      return;
    case 'Detach':
      shutdown.request('detached', null);
      return;
    case 'FocusIn':
    case 'FocusOut':
      c.input.focus(f.type === 'FocusIn');
      return;
    case 'HostNotice':
      // An upstream host asks us to show the operator something: drawn like our own notices.
      c.notify('info', f.text);
      return;
    case 'AttachControl':
      control(c, f);
      return;
    case 'ExtHello':
      c.handshake.extHello(f.features);
      if (shutdown.extHelloArrived()) return;
      // The attach repaint went out before the host said it wants Modes.
      c.sendModes();
      // Only a host that asked (its loopback is not the container's, offers not turned off) is told of ports.
      if (host.features['ports'] !== undefined && c.handshake.hostHas('ports')) c.watchPorts();
      return;
    case 'Repaint':
      c.runExclusive(() => c.repaint());
      return;
    case 'Resolve':
      if (host.features['resolve'] === undefined) {
        host.log(`client ${c.id}: ignored Resolve (not advertised)`);
        return;
      }
      resolve(c, f);
      return;
    case 'StageOnly':
      if (host.features['stage-only'] === undefined || host.imageSink.stageOnly === undefined) {
        host.log(`client ${c.id}: ignored StageOnly (not advertised)`);
        return;
      }
      // Handled in frame order, so it is recorded before the image request that follows it.
      host.imageSink.stageOnly(f.requestId);
      return;
    case 'ListLinks':
      if (host.features['link-list'] === undefined) {
        host.log(`client ${c.id}: ignored ListLinks (not advertised)`);
        return;
      }
      listLinks(c, f.requestId);
      return;
    case 'HoldReplies':
      if (host.features['held-replies'] === undefined || !c.handshake.hostHas('held-replies')) {
        host.log(`client ${c.id}: ignored HoldReplies (not negotiated)`);
        return;
      }
      c.holdReplies(f.held);
      return;
    default:
      assertNever(f);
  }
}

function control(c: FrameContext, f: ControlFrame): void {
  const { body, requestId, context } = f;
  if (isImageBody(body)) {
    image(c, body, requestId, context);
    return;
  }
  switch (body.kind) {
    case 'Detach':
      c.respond(requestId, 'success');
      c.shutdown.request('detached', null);
      return;
    case 'FocusIn':
    case 'FocusOut':
      c.input.focus(body.kind === 'FocusIn');
      c.respond(requestId, 'success');
      return;
    default:
      assertNever(body);
  }
}

/** Both frame forms of an image operation: the legacy frame (no request id) and the AttachControl body. */
function image(c: FrameContext, src: ImageFrame | ImageBody, requestId: bigint | null, context: AttachContext | null): void {
  const op = imageOp(src);
  Promise.resolve()
    .then(() => c.host.imageSink.handle({ op, requestId, context }, c.replies))
    .catch((e: unknown) => {
      c.host.log(`client ${c.id}: image sink failed: ${(e as Error).message}`);
      if (requestId !== null && (op.kind === 'whole' || op.kind === 'start')) c.respond(requestId, 'rejected');
    });
}

/** Answers one ListLinks request (extension `link-list`) with exactly one Links under its id. */
function listLinks(c: FrameContext, requestId: bigint): void {
  const { session } = c.host;
  session
    .settle()
    .then(() => session.visibleLinks())
    .catch((e: unknown) => {
      c.host.log(`client ${c.id}: listing links failed: ${(e as Error).message}`);
      return [];
    })
    .then(
      (links) => {
        if (c.handshake.live) c.send({ type: 'Links', requestId, links });
      },
      () => undefined,
    );
}

/** Answers one Resolve request (extension `resolve`) with exactly one Resolved under its id. */
function resolve(c: FrameContext, f: Extract<ClientFrame, { type: 'Resolve' }>): void {
  resolveRequest(c.host.session, c.host.offers, f.target, f.at)
    .catch((e: unknown) => {
      c.host.log(`client ${c.id}: resolve failed: ${(e as Error).message}`);
      return { kind: 'none' as const, text: '' };
    })
    .then(
      (a) => {
        if (c.handshake.live) c.send({ type: 'Resolved', requestId: f.requestId, kind: a.kind, text: a.text });
      },
      () => undefined,
    );
}
