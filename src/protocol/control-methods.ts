/**
 * The methods of the control channel (docs/protocol.md section 7), one typed descriptor each, shared by both
 * sides: the host builds its request from the descriptor's params and reads the reply through the
 * descriptor's reply parser (which checks every claim of the capsule: a reply is input from the container);
 * the capsule reads the request through the descriptor's params parser and builds its reply from the reply
 * type. Neither side reads a request or a reply by string key outside this file, and the JSON on the wire
 * is what `fields` and `replyFields` write, field by field and in this order.
 */
import { isErrorCode, JackinError, type ErrorCode } from '../errors.ts';
import { encodeControlMessage } from './control-channel.ts';
import { isPort, FORWARD_LOOPBACKS, type ForwardLoopback } from './forward.ts';
import { NOTICE_LEVELS, type NoticeLevel } from './frames.ts';
import { MiB } from './limits.ts';

/** A request or reply as a JSON object, once decoded. */
export type ControlRequestObject = Readonly<Record<string, unknown>>;

/** The capsule's reading of a request: its params, or the refusal to answer (`{"ok":false,code,message}`). */
type ParamsCheck<P> = { readonly ok: true; readonly params: P } | { readonly ok: false; readonly code: ErrorCode; readonly message: string };

/** A method that takes nothing but its name. */
export type NoParams = Readonly<Record<never, never>>;

/**
 * One control method. `Params` is what the host asks and the capsule reads; `Reply` what the capsule answers
 * after `"ok":true`; `Read` what the host takes from such a reply once checked (by default the reply itself;
 * fewer fields when the host has no use for some, which then are not trusted either).
 */
export interface ControlMethod<Name extends string, Params, Reply, Read = Reply> {
  readonly method: Name;
  /** The request's fields after `"method"`, in wire order. */
  fields(params: Params): Record<string, unknown>;
  /** The capsule's check of a request (the whole object, `method` included). */
  parseParams(request: ControlRequestObject): ParamsCheck<Params>;
  /** The reply's fields after `"ok":true`, in wire order. */
  replyFields(reply: Reply): Record<string, unknown>;
  /** The host's check of an `ok:true` reply: E_CONTROL_REPLY for anything it cannot trust. */
  parseReply(reply: ControlRequestObject): Read;
}

/**
 * The method a request names (the capsule looks it up among its descriptors), or why the request names none
 * (answered E_BAD_REQUEST).
 */
export function requestedMethod(value: unknown): { ok: true; method: string; request: ControlRequestObject } | { ok: false; message: string } {
  const request = record(value);
  if (request === null) return { ok: false, message: 'control request must be a JSON object like {"method":"status"}' };
  const method = request['method'];
  if (typeof method !== 'string') return { ok: false, message: 'control request has no string "method" field' };
  return { ok: true, method, request };
}

/** The request object `{"method":…, fields…}` for `params`. */
function controlRequestMessage<N extends string, P>(m: ControlMethod<N, P, unknown, unknown>, params: P): { method: N } & Record<string, unknown> {
  return { method: m.method, ...m.fields(params) };
}

/** The request, framed for the control channel. */
export function encodeControlRequest<N extends string, P>(m: ControlMethod<N, P, unknown, unknown>, params: P): Buffer {
  return encodeControlMessage(controlRequestMessage(m, params));
}

/** The capsule's `{"ok":true,…}` reply. */
export function controlReplyMessage<R>(m: ControlMethod<string, unknown, R, unknown>, reply: R): { ok: true } & Record<string, unknown> {
  return { ok: true, ...m.replyFields(reply) };
}

function record(v: unknown): ControlRequestObject | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ControlRequestObject) : null;
}

/**
 * The host's reading of a reply to `m`: an `ok:false` reply becomes its JackinError (a code this host does
 * not know, a newer capsule's or garbage, stays visible in the message of an E_CONTROL_REPLY); an `ok:true`
 * reply is checked by the method's parser. Anything else is E_CONTROL_REPLY.
 */
export function readControlReply<T>(m: ControlMethod<string, unknown, unknown, T>, value: unknown): T {
  const r = record(value);
  if (r === null || typeof r['ok'] !== 'boolean')
    throw new JackinError('E_CONTROL_REPLY', `${m.method}: malformed reply ${JSON.stringify(value)?.slice(0, 200)}`);
  if (r['ok'] === true) return m.parseReply(r);
  const message = typeof r['message'] === 'string' ? r['message'] : `${m.method} failed`;
  if (isErrorCode(r['code'])) throw new JackinError(r['code'], message);
  throw new JackinError('E_CONTROL_REPLY', typeof r['code'] === 'string' ? `${JSON.stringify(r['code']).slice(0, 60)}: ${message}` : message);
}

/** A transfer id of a reply (a decimal u64 as a string); E_CONTROL_REPLY otherwise. */
function replyU64(reply: ControlRequestObject, method: string, field: string): bigint {
  const id = reply[field];
  if (typeof id !== 'string' || !/^\d{1,20}$/.test(id) || BigInt(id) > 0xffffffffffffffffn) {
    throw new JackinError('E_CONTROL_REPLY', `${method} reply has no valid ${field}: ${JSON.stringify(id)?.slice(0, 100)}`);
  }
  return BigInt(id);
}

const accept = <P>(params: P): ParamsCheck<P> => ({ ok: true, params });
const badRequest = (message: string): ParamsCheck<never> => ({ ok: false, code: 'E_BAD_REQUEST', message });
const noFields = (): Record<string, unknown> => ({});
const noParams = (): ParamsCheck<NoParams> => accept({});

/** A string a reply holds under `field`, or null for anything else (fields the host reads leniently). */
function stringOrNull(reply: ControlRequestObject, field: string): string | null {
  const v = reply[field];
  return typeof v === 'string' ? v : null;
}

// ---- status -------------------------------------------------------------------------------------------

export interface StatusReply {
  readonly name: string;
  readonly program: readonly string[];
  readonly pid: number;
  readonly workspace: string;
  readonly attached: boolean;
  readonly clients: number;
}

/** What `jackin ls` takes from a status reply: each field when it has its type, else null. */
export interface StatusRead {
  readonly program: string[] | null;
  readonly pid: number | null;
  readonly workspace: string | null;
  readonly attached: boolean | null;
}

export const STATUS_METHOD: ControlMethod<'status', NoParams, StatusReply, StatusRead> = {
  method: 'status',
  fields: noFields,
  parseParams: noParams,
  replyFields: (r) => ({ name: r.name, program: r.program, pid: r.pid, workspace: r.workspace, attached: r.attached, clients: r.clients }),
  parseReply: (r) => {
    const program = r['program'];
    return {
      program: Array.isArray(program) && program.every((x) => typeof x === 'string') ? (program as string[]) : null,
      pid: typeof r['pid'] === 'number' ? r['pid'] : null,
      workspace: stringOrNull(r, 'workspace'),
      attached: typeof r['attached'] === 'boolean' ? r['attached'] : null,
    };
  },
};

// ---- notice -------------------------------------------------------------------------------------------

export interface NoticeParams {
  readonly level: NoticeLevel;
  readonly text: string;
}

export const NOTICE_METHOD: ControlMethod<'notice', NoticeParams, { readonly shown: boolean }> = {
  method: 'notice',
  fields: (p) => ({ level: p.level, text: p.text }),
  parseParams: (req) => {
    const text = req['text'];
    const level = req['level'] ?? 'info';
    if (typeof text !== 'string' || text.length === 0) return badRequest('notice needs a non-empty string "text"');
    if (!(NOTICE_LEVELS as readonly unknown[]).includes(level))
      return badRequest(`notice level ${JSON.stringify(level)} is not info, success, warning or error`);
    return accept({ level: level as NoticeLevel, text });
  },
  replyFields: (r) => ({ shown: r.shown }),
  parseReply: (r) => {
    if (typeof r['shown'] !== 'boolean')
      throw new JackinError('E_CONTROL_REPLY', `notice reply has no boolean shown: ${JSON.stringify(r['shown'])?.slice(0, 60)}`);
    return { shown: r['shown'] };
  },
};

// ---- offers -------------------------------------------------------------------------------------------

export const OFFER_URL_METHOD: ControlMethod<'offer-url', { readonly url: string }, NoParams> = {
  method: 'offer-url',
  fields: (p) => ({ url: p.url }),
  parseParams: (req) => {
    const url = req['url'];
    return typeof url === 'string' ? accept({ url }) : badRequest('offer-url needs a string "url"');
  },
  replyFields: noFields,
  parseReply: () => ({}),
};

export const OFFER_FILE_METHOD: ControlMethod<'offer-file', { readonly path: string }, NoParams> = {
  method: 'offer-file',
  fields: (p) => ({ path: p.path }),
  parseParams: (req) => {
    const path = req['path'];
    return typeof path === 'string' ? accept({ path }) : badRequest('offer-file needs a string "path"');
  },
  replyFields: noFields,
  parseReply: () => ({}),
};

export interface OffersReply {
  /** The latest offered file, an absolute container path; checked against policy only when pulled. */
  readonly file: string | null;
  /** The latest offered link; the host checks it again before opening. */
  readonly url: string | null;
}

/** The latest offers. The host reads a field that is not a non-empty string as no offer. */
export const OFFERS_METHOD: ControlMethod<'offers', NoParams, OffersReply> = {
  method: 'offers',
  fields: noFields,
  parseParams: noParams,
  replyFields: (r) => ({ file: r.file, url: r.url }),
  parseReply: (r) => {
    const offered = (field: string): string | null => {
      const v = stringOrNull(r, field);
      return v === '' ? null : v;
    };
    return { file: offered('file'), url: offered('url') };
  },
};

// ---- clipboard-image ----------------------------------------------------------------------------------

/** The most pasted text the `clipboard-image` reply carries, in UTF-8 bytes (before base64). */
const MAX_CLIPBOARD_TEXT_BYTES = 1 * MiB;

/** What the capsule sends: the staged image's name and MIME type, the pasted text in base64. */
export interface ClipboardImageReply {
  readonly name: string | null;
  readonly type: string | null;
  readonly text: string | null;
}

/** What the capsule remembers of the operator's last pastes, as the host-side tools read it. */
export interface ClipboardImageRead {
  /** The image last pasted, as the capsule names it under `<run>/clipboard/` (`clip-<stamp>-<hex>.<ext>`), and its MIME type. */
  readonly image: { readonly name: string; readonly type: string } | null;
  /** The text last pasted in bracketed-paste markers, decoded. */
  readonly text: string | null;
}

const STAGED_IMAGE_NAME = /^clip-\d{8}-\d{6}-[0-9a-f]{16}\.(?:png|jpg|gif|webp|tiff)$/u;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/u;

function pastedImage(r: ControlRequestObject): ClipboardImageRead['image'] {
  const name = r['name'];
  const type = r['type'];
  if (name === null) return null;
  if (typeof name !== 'string' || !STAGED_IMAGE_NAME.test(name) || typeof type !== 'string' || !/^image\/[a-z]+$/u.test(type)) {
    throw new JackinError('E_CONTROL_REPLY', `the capsule named no staged image: ${JSON.stringify({ name, type })}`);
  }
  return { name, type };
}

/** The pasted text (base64 in the reply; absent from an older capsule), checked: at most 1 MiB of UTF-8. */
function pastedText(text: unknown): string | null {
  if (text === undefined || text === null) return null;
  const bad = (why: string): JackinError => new JackinError('E_CONTROL_REPLY', `the capsule's pasted text is ${why}`);
  if (typeof text !== 'string' || text.length > Math.ceil(MAX_CLIPBOARD_TEXT_BYTES / 3) * 4 || text.length % 4 !== 0 || !BASE64.test(text))
    throw bad('not base64 of at most 1 MiB');
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length > MAX_CLIPBOARD_TEXT_BYTES) throw bad('over 1 MiB');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (e) {
    throw new JackinError('E_CONTROL_REPLY', "the capsule's pasted text is not UTF-8", { cause: e });
  }
}

export const CLIPBOARD_IMAGE_METHOD: ControlMethod<'clipboard-image', NoParams, ClipboardImageReply, ClipboardImageRead> = {
  method: 'clipboard-image',
  fields: noFields,
  parseParams: noParams,
  replyFields: (r) => ({ name: r.name, type: r.type, text: r.text }),
  parseReply: (r) => ({ image: pastedImage(r), text: pastedText(r['text']) }),
};

// ---- export -------------------------------------------------------------------------------------------

export interface ExportParams {
  /** Container path; relative resolves against the capsule's workspace. */
  readonly path: string;
  /**
   * Echoed in FileExportStart and nothing else: the host that asked opens or reveals the file itself, from
   * its operator's choice (which never has both).
   */
  readonly reveal: boolean;
  readonly open: boolean;
  /** The operator confirmed a path outside the roots (policy outsideRoots = confirm). */
  readonly confirmOutside: boolean;
  /** A directory may be archived while it streams (FileExportLength then says the exact size). */
  readonly streamSize: boolean;
}

export interface ExportReply {
  readonly exportId: bigint;
  readonly name: string;
  readonly size: number;
  readonly kind: 'file' | 'directory';
  /** A directory archived while it streams: FileExportStart's size is an upper bound. */
  readonly streamed: boolean;
}

/** What the host takes from an export reply: name and size come again, checked, in FileExportStart. */
export type ExportRead = Pick<ExportReply, 'exportId' | 'kind' | 'streamed'>;

function optionalFlag(req: ControlRequestObject, key: string): boolean | undefined | null {
  const v = req[key];
  if (v === undefined) return undefined;
  return typeof v === 'boolean' ? v : null;
}

export const EXPORT_METHOD: ControlMethod<'export', ExportParams, ExportReply, ExportRead> = {
  method: 'export',
  fields: (p) => ({
    path: p.path,
    reveal: p.reveal,
    open: p.open,
    ...(p.confirmOutside ? { confirmOutside: true } : {}),
    ...(p.streamSize ? { streamSize: true } : {}),
  }),
  parseParams: (req) => {
    const path = req['path'];
    if (typeof path !== 'string' || path.length === 0)
      return badRequest('export needs a non-empty string "path", e.g. {"method":"export","path":"report.txt"}');
    const reveal = optionalFlag(req, 'reveal');
    const open = optionalFlag(req, 'open');
    const confirmOutside = optionalFlag(req, 'confirmOutside');
    const streamSize = optionalFlag(req, 'streamSize');
    if (reveal === null || open === null || confirmOutside === null || streamSize === null) {
      return badRequest('export: "reveal", "open", "confirmOutside" and "streamSize" must be true or false');
    }
    return accept({ path, reveal: reveal === true, open: open === true, confirmOutside: confirmOutside === true, streamSize: streamSize === true });
  },
  replyFields: (r) => ({ exportId: r.exportId.toString(), name: r.name, size: r.size, kind: r.kind, ...(r.streamed ? { streamed: true } : {}) }),
  parseReply: (r) => ({
    exportId: replyU64(r, 'export', 'exportId'),
    kind: r['kind'] === 'directory' ? 'directory' : 'file',
    streamed: r['streamed'] === true,
  }),
};

// ---- stage --------------------------------------------------------------------------------------------

export interface StageParams {
  /** The file's base name; the capsule checks it as one path component (E_BAD_STAGE_NAME). */
  readonly name: string;
  readonly size: number;
  /** False: the capsule does not tell an attached operator (the host does). */
  readonly notify: boolean;
}

export interface StageReply {
  readonly transferId: bigint;
  readonly chunkBytes: number;
}

/** What the host takes from a stage reply: it sends chunks of its own size (at most MAX_CHUNK_BYTES). */
export type StageRead = Pick<StageReply, 'transferId'>;

export const STAGE_METHOD: ControlMethod<'stage', StageParams, StageReply, StageRead> = {
  method: 'stage',
  fields: (p) => ({ name: p.name, size: p.size, ...(p.notify ? {} : { notify: false }) }),
  parseParams: (req) => {
    const name = req['name'];
    const size = req['size'];
    if (typeof name !== 'string' || name === '')
      return { ok: false, code: 'E_BAD_STAGE_NAME', message: `file name ${JSON.stringify(name)?.slice(0, 300)} is empty or not a string` };
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return badRequest(`stage size ${JSON.stringify(size)} is not a byte count`);
    return accept({ name, size, notify: req['notify'] !== false });
  },
  replyFields: (r) => ({ transferId: r.transferId.toString(), chunkBytes: r.chunkBytes }),
  parseReply: (r) => ({ transferId: replyU64(r, 'stage', 'transferId') }),
};

// ---- forward ------------------------------------------------------------------------------------------

export interface ForwardParams {
  /** A port of the container's loopback, 1..65535; a request names nothing else. */
  readonly port: number;
}

export interface ForwardReply {
  /** The loopback the capsule reached. */
  readonly address: ForwardLoopback;
}

/**
 * Reads a `forward` request: any field but `method` and `port` (an address, a host name, a family) is
 * refused, so a request can only ever name a port of the container's own loopback.
 */
function parseForwardParams(req: ControlRequestObject): ParamsCheck<ForwardParams> {
  const extra = Object.keys(req).filter((k) => k !== 'method' && k !== 'port');
  if (extra.length > 0)
    return badRequest(`a forward request names a port only; refused field(s) ${extra.map((k) => JSON.stringify(k).slice(0, 40)).join(', ')}`);
  const port = req['port'];
  if (!isPort(port)) return badRequest(`a forward request needs "port" 1..65535, got ${JSON.stringify(port)?.slice(0, 40)}`);
  return accept({ port });
}

export const FORWARD_METHOD: ControlMethod<'forward', ForwardParams, ForwardReply> = {
  method: 'forward',
  fields: (p) => {
    if (!isPort(p.port)) throw new RangeError(`${p.port} is not a port (1..65535)`);
    return { port: p.port };
  },
  parseParams: parseForwardParams,
  replyFields: (r) => ({ address: r.address }),
  parseReply: (r) => {
    const address = r['address'];
    if (!FORWARD_LOOPBACKS.includes(address as ForwardLoopback)) {
      throw new JackinError('E_CONTROL_REPLY', `the capsule says it connected to ${JSON.stringify(address)?.slice(0, 60)}, not a loopback address`);
    }
    return { address: address as ForwardLoopback };
  },
};

/**
 * `{"method":"forward"}` without a port: a capsule with forwards refuses it with E_BAD_REQUEST without
 * connecting anywhere, an older one answers E_UNKNOWN_METHOD (`jackin forward` asks it first).
 */
export const FORWARD_PROBE: ControlMethod<'forward', NoParams, NoParams, never> = {
  method: 'forward',
  fields: noFields,
  parseParams: () => badRequest('a forward probe is never served'),
  replyFields: noFields,
  parseReply: () => {
    throw new JackinError('E_CONTROL_REPLY', 'the capsule accepted a forward without a port');
  },
};

// ---- forward-list -------------------------------------------------------------------------------------

/** What made a forward: `jackin forward`, a login link's callback, or an offered port the operator chose. */
const LISTED_FORWARD_KINDS = ['forward', 'login', 'offered'] as const;
export type ListedForwardKind = (typeof LISTED_FORWARD_KINDS)[number];

/** One live forward as the capsule lists it: a port of the host's loopback to a port of the container's. */
export interface ListedForward {
  readonly hostPort: number;
  readonly containerPort: number;
  readonly kind: ListedForwardKind;
}

/** The most forwards one announcement names (`jackin forward` names one per port it forwards). */
export const MAX_ANNOUNCED_FORWARDS = 16;
/** The most forwards a `ports` reply may list (the capsule keeps fewer: MAX_LISTED_FORWARDS). */
const MAX_PORTS_REPLY_FORWARDS = 1024;

/** One forward of a request or reply, read strictly (exactly these three fields), or why it is not one. */
function readListedForward(v: unknown): ListedForward | string {
  const r = record(v);
  if (r === null) return 'a forward must be an object {"hostPort","containerPort","kind"}';
  const extra = Object.keys(r).filter((k) => k !== 'hostPort' && k !== 'containerPort' && k !== 'kind');
  if (extra.length > 0)
    return `a forward names hostPort, containerPort and kind only; refused field(s) ${extra.map((k) => JSON.stringify(k).slice(0, 40)).join(', ')}`;
  const { hostPort, containerPort, kind } = r;
  if (!isPort(hostPort) || !isPort(containerPort)) return `a forward's ports must be 1..65535, got ${JSON.stringify([hostPort, containerPort]).slice(0, 60)}`;
  if (!(LISTED_FORWARD_KINDS as readonly unknown[]).includes(kind))
    return `a forward's kind ${JSON.stringify(kind)?.slice(0, 40)} is not ${LISTED_FORWARD_KINDS.join(', ')}`;
  return { hostPort, containerPort, kind: kind as ListedForwardKind };
}

function forwardFields(f: ListedForward): Record<string, unknown> {
  return { hostPort: f.hostPort, containerPort: f.containerPort, kind: f.kind };
}

export interface AnnounceForwardsParams {
  readonly forwards: readonly ListedForward[];
}

/**
 * The host tells the capsule which of its ports now lead to the container (docs/protocol.md section 8.18):
 * the capsule lists them (`jackin-capsule ports`) while this connection stays open, and forgets them when it
 * closes, so a host that dies leaves nothing listed.
 */
export const ANNOUNCE_FORWARDS_METHOD: ControlMethod<'announce-forwards', AnnounceForwardsParams, { readonly listed: number }> = {
  method: 'announce-forwards',
  fields: (p) => {
    if (p.forwards.length === 0 || p.forwards.length > MAX_ANNOUNCED_FORWARDS)
      throw new RangeError(`an announcement names 1..${MAX_ANNOUNCED_FORWARDS} forwards, not ${p.forwards.length}`);
    return { forwards: p.forwards.map(forwardFields) };
  },
  parseParams: (req) => {
    const extra = Object.keys(req).filter((k) => k !== 'method' && k !== 'forwards');
    if (extra.length > 0)
      return badRequest(`announce-forwards names forwards only; refused field(s) ${extra.map((k) => JSON.stringify(k).slice(0, 40)).join(', ')}`);
    const list = req['forwards'];
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ANNOUNCED_FORWARDS)
      return badRequest(`announce-forwards needs "forwards": an array of 1..${MAX_ANNOUNCED_FORWARDS} forwards`);
    const forwards: ListedForward[] = [];
    for (const item of list) {
      const f = readListedForward(item);
      if (typeof f === 'string') return badRequest(f);
      forwards.push(f);
    }
    return accept({ forwards });
  },
  replyFields: (r) => ({ listed: r.listed }),
  parseReply: (r) => {
    const listed = r['listed'];
    if (!Number.isInteger(listed) || (listed as number) < 0 || (listed as number) > MAX_ANNOUNCED_FORWARDS)
      throw new JackinError('E_CONTROL_REPLY', `announce-forwards reply has no count listed: ${JSON.stringify(listed)?.slice(0, 60)}`);
    return { listed: listed as number };
  },
};

export interface PortsReply {
  readonly forwards: readonly ListedForward[];
}

/** The live forwards the hosts announced, for `jackin-capsule ports` in the container. */
export const PORTS_METHOD: ControlMethod<'ports', NoParams, PortsReply> = {
  method: 'ports',
  fields: noFields,
  parseParams: noParams,
  replyFields: (r) => ({ forwards: r.forwards.map(forwardFields) }),
  parseReply: (r) => {
    const list = r['forwards'];
    if (!Array.isArray(list) || list.length > MAX_PORTS_REPLY_FORWARDS)
      throw new JackinError('E_CONTROL_REPLY', `ports reply has no list of at most ${MAX_PORTS_REPLY_FORWARDS} forwards`);
    const forwards: ListedForward[] = [];
    for (const item of list) {
      const f = readListedForward(item);
      if (typeof f === 'string') throw new JackinError('E_CONTROL_REPLY', `ports reply: ${f}`);
      forwards.push(f);
    }
    return { forwards };
  },
};
