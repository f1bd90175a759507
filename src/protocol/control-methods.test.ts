import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../errors.ts';
import {
  ANNOUNCE_FORWARDS_METHOD,
  CLIPBOARD_IMAGE_METHOD,
  ControlMessageDecoder,
  controlReplyMessage,
  encodeControlRequest,
  EXPORT_METHOD,
  FORWARD_METHOD,
  FORWARD_PROBE,
  NOTICE_METHOD,
  OFFER_FILE_METHOD,
  OFFER_URL_METHOD,
  OFFERS_METHOD,
  PORTS_METHOD,
  readControlReply,
  STAGE_METHOD,
  STATUS_METHOD,
} from './index.ts';

/** The JSON text of a framed control request. */
function wire(b: Buffer): string {
  assert.equal(b.readUInt32BE(0), b.length - 4);
  return b.subarray(4).toString('utf8');
}

test('control requests are the JSON of docs/protocol.md section 7, field for field and in order', () => {
  assert.equal(wire(encodeControlRequest(STATUS_METHOD, {})), '{"method":"status"}');
  assert.equal(wire(encodeControlRequest(OFFERS_METHOD, {})), '{"method":"offers"}');
  assert.equal(wire(encodeControlRequest(CLIPBOARD_IMAGE_METHOD, {})), '{"method":"clipboard-image"}');
  assert.equal(wire(encodeControlRequest(OFFER_URL_METHOD, { url: 'https://example.com/' })), '{"method":"offer-url","url":"https://example.com/"}');
  assert.equal(wire(encodeControlRequest(OFFER_FILE_METHOD, { path: '/w/a' })), '{"method":"offer-file","path":"/w/a"}');
  assert.equal(wire(encodeControlRequest(NOTICE_METHOD, { level: 'warning', text: 'hi' })), '{"method":"notice","level":"warning","text":"hi"}');
  assert.equal(
    wire(encodeControlRequest(EXPORT_METHOD, { path: 'a.txt', reveal: false, open: true, confirmOutside: false, streamSize: true })),
    '{"method":"export","path":"a.txt","reveal":false,"open":true,"streamSize":true}',
  );
  assert.equal(
    wire(encodeControlRequest(EXPORT_METHOD, { path: '/etc/x', reveal: true, open: false, confirmOutside: true, streamSize: true })),
    '{"method":"export","path":"/etc/x","reveal":true,"open":false,"confirmOutside":true,"streamSize":true}',
  );
  assert.equal(wire(encodeControlRequest(STAGE_METHOD, { name: 'a.pdf', size: 5, notify: true })), '{"method":"stage","name":"a.pdf","size":5}');
  assert.equal(
    wire(encodeControlRequest(STAGE_METHOD, { name: 'a.pdf', size: 5, notify: false })),
    '{"method":"stage","name":"a.pdf","size":5,"notify":false}',
  );
  assert.equal(wire(encodeControlRequest(FORWARD_METHOD, { port: 8080 })), '{"method":"forward","port":8080}');
  assert.equal(wire(encodeControlRequest(FORWARD_PROBE, {})), '{"method":"forward"}');
  assert.throws(() => encodeControlRequest(FORWARD_METHOD, { port: 0 }), RangeError);
});

test('control replies are the JSON of docs/protocol.md section 7, field for field and in order', () => {
  const json = (v: unknown): string => JSON.stringify(v);
  assert.equal(
    json(controlReplyMessage(STATUS_METHOD, { name: 'a', program: ['sh'], pid: 7, workspace: '/w', attached: false, clients: 0 })),
    '{"ok":true,"name":"a","program":["sh"],"pid":7,"workspace":"/w","attached":false,"clients":0}',
  );
  assert.equal(json(controlReplyMessage(NOTICE_METHOD, { shown: true })), '{"ok":true,"shown":true}');
  assert.equal(json(controlReplyMessage(OFFER_URL_METHOD, {})), '{"ok":true}');
  assert.equal(json(controlReplyMessage(OFFERS_METHOD, { file: null, url: 'https://x/' })), '{"ok":true,"file":null,"url":"https://x/"}');
  assert.equal(
    json(controlReplyMessage(CLIPBOARD_IMAGE_METHOD, { name: null, type: null, text: 'aGk=' })),
    '{"ok":true,"name":null,"type":null,"text":"aGk="}',
  );
  assert.equal(
    json(controlReplyMessage(EXPORT_METHOD, { exportId: 18446744073709551615n, name: 'a', size: 3, kind: 'file', streamed: false })),
    '{"ok":true,"exportId":"18446744073709551615","name":"a","size":3,"kind":"file"}',
  );
  assert.equal(
    json(controlReplyMessage(EXPORT_METHOD, { exportId: 1n, name: 'd.tar.zst', size: 9, kind: 'directory', streamed: true })),
    '{"ok":true,"exportId":"1","name":"d.tar.zst","size":9,"kind":"directory","streamed":true}',
  );
  assert.equal(json(controlReplyMessage(STAGE_METHOD, { transferId: 42n, chunkBytes: 1048576 })), '{"ok":true,"transferId":"42","chunkBytes":1048576}');
  assert.equal(json(controlReplyMessage(FORWARD_METHOD, { address: '::1' })), '{"ok":true,"address":"::1"}');
});

test('what the host sends, the capsule reads back as the same params', () => {
  const roundTrip = (m: { parseParams(r: Readonly<Record<string, unknown>>): unknown }, b: Buffer): unknown => {
    const [request] = new ControlMessageDecoder().push(b);
    return m.parseParams(request as Record<string, unknown>);
  };
  const exportParams = { path: 'a.txt', reveal: true, open: false, confirmOutside: true, streamSize: true };
  assert.deepEqual(roundTrip(EXPORT_METHOD, encodeControlRequest(EXPORT_METHOD, exportParams)), { ok: true, params: exportParams });
  const stage = { name: 'a.pdf', size: 0, notify: false };
  assert.deepEqual(roundTrip(STAGE_METHOD, encodeControlRequest(STAGE_METHOD, stage)), { ok: true, params: stage });
  assert.deepEqual(roundTrip(NOTICE_METHOD, encodeControlRequest(NOTICE_METHOD, { level: 'error', text: 'x' })), {
    ok: true,
    params: { level: 'error', text: 'x' },
  });
});

test('the capsule refuses a malformed request with the code docs/protocol.md names', () => {
  const code = (c: { ok: boolean; code?: string }): string | undefined => (c.ok ? undefined : c.code);
  assert.equal(code(EXPORT_METHOD.parseParams({ method: 'export' })), 'E_BAD_REQUEST');
  assert.equal(code(EXPORT_METHOD.parseParams({ method: 'export', path: 'a', reveal: 'yes' })), 'E_BAD_REQUEST');
  // An older host sends neither confirmOutside nor streamSize: both read as false.
  assert.deepEqual(EXPORT_METHOD.parseParams({ method: 'export', path: 'a' }), {
    ok: true,
    params: { path: 'a', reveal: false, open: false, confirmOutside: false, streamSize: false },
  });
  assert.equal(code(STAGE_METHOD.parseParams({ method: 'stage', name: '', size: 1 })), 'E_BAD_STAGE_NAME');
  assert.equal(code(STAGE_METHOD.parseParams({ method: 'stage', name: 'a', size: -1 })), 'E_BAD_REQUEST');
  assert.equal(code(STAGE_METHOD.parseParams({ method: 'stage', name: 'a', size: 1.5 })), 'E_BAD_REQUEST');
  assert.equal(code(NOTICE_METHOD.parseParams({ method: 'notice', text: '' })), 'E_BAD_REQUEST');
  assert.equal(code(NOTICE_METHOD.parseParams({ method: 'notice', text: 'x', level: 'loud' })), 'E_BAD_REQUEST');
  assert.deepEqual(NOTICE_METHOD.parseParams({ method: 'notice', text: 'x' }), { ok: true, params: { level: 'info', text: 'x' } });
  assert.equal(code(OFFER_URL_METHOD.parseParams({ method: 'offer-url', url: 7 })), 'E_BAD_REQUEST');
  assert.equal(code(OFFER_FILE_METHOD.parseParams({ method: 'offer-file' })), 'E_BAD_REQUEST');
  assert.equal(code(FORWARD_METHOD.parseParams({ method: 'forward' })), 'E_BAD_REQUEST');
});

test('the host checks every claim of a reply it uses', () => {
  const bad = (f: () => unknown): void => assert.throws(f, (e: unknown) => hasCode(e, 'E_CONTROL_REPLY'));
  assert.deepEqual(readControlReply(EXPORT_METHOD, { ok: true, exportId: '18446744073709551615' }), {
    exportId: 18446744073709551615n,
    kind: 'file',
    streamed: false,
  });
  for (const id of [undefined, 7, '', '-1', '1e3', '18446744073709551616', '123456789012345678901'])
    bad(() => readControlReply(EXPORT_METHOD, { ok: true, exportId: id }));
  assert.deepEqual(readControlReply(EXPORT_METHOD, { ok: true, exportId: '3', kind: 'directory', streamed: true }), {
    exportId: 3n,
    kind: 'directory',
    streamed: true,
  });
  assert.deepEqual(readControlReply(STAGE_METHOD, { ok: true, transferId: '42', chunkBytes: 1 }), { transferId: 42n });
  bad(() => readControlReply(STAGE_METHOD, { ok: true, transferId: 42 }));
  assert.deepEqual(readControlReply(FORWARD_METHOD, { ok: true, address: '127.0.0.1' }), { address: '127.0.0.1' });
  bad(() => readControlReply(FORWARD_METHOD, { ok: true, address: '169.254.169.254' }));
  // Offers: anything but a non-empty string is no offer.
  assert.deepEqual(readControlReply(OFFERS_METHOD, { ok: true, file: ['x'], url: '' }), { file: null, url: null });
  // Status: each field is taken only when it has its type.
  assert.deepEqual(readControlReply(STATUS_METHOD, { ok: true, program: ['a', 1], pid: '7', workspace: '/w', attached: true }), {
    program: null,
    pid: null,
    workspace: '/w',
    attached: true,
  });
  // Clipboard: only a name the capsule gives its staged images, and UTF-8 text of at most 1 MiB in base64.
  assert.deepEqual(readControlReply(CLIPBOARD_IMAGE_METHOD, { ok: true, name: null, type: null, text: null }), { image: null, text: null });
  assert.deepEqual(readControlReply(CLIPBOARD_IMAGE_METHOD, { ok: true, name: 'clip-20260101-120000-0123456789abcdef.png', type: 'image/png', text: 'aGk=' }), {
    image: { name: 'clip-20260101-120000-0123456789abcdef.png', type: 'image/png' },
    text: 'hi',
  });
  bad(() => readControlReply(CLIPBOARD_IMAGE_METHOD, { ok: true, name: '../../etc/passwd', type: 'image/png' }));
  bad(() => readControlReply(CLIPBOARD_IMAGE_METHOD, { ok: true, name: null, text: '/w==' }));
  bad(() => readControlReply(CLIPBOARD_IMAGE_METHOD, { ok: true, name: null, text: 'not base64!' }));
  bad(() => readControlReply(NOTICE_METHOD, { ok: true }));
  // A capsule that accepts a forward without a port is not ours.
  bad(() => readControlReply(FORWARD_PROBE, { ok: true }));
  // Not a reply at all.
  for (const v of [null, [], 'ok', { ok: 'yes' }]) bad(() => readControlReply(OFFERS_METHOD, v));
});

test('a refusal in a reply becomes its code; a code this host does not know stays in the message', () => {
  const thrown = (v: unknown): { code: string; message: string } => {
    try {
      readControlReply(STAGE_METHOD, v);
    } catch (e) {
      return e as { code: string; message: string };
    }
    return assert.fail('no error');
  };
  assert.equal(thrown({ ok: false, code: 'E_STAGE_TOO_LARGE', message: 'big' }).code, 'E_STAGE_TOO_LARGE');
  const e = thrown({ ok: false, code: 'NEWER_CODE', message: 'm' });
  assert.equal(e.code, 'E_CONTROL_REPLY');
  assert.equal(e.message, '"NEWER_CODE": m');
  assert.equal(thrown({ ok: false }).message, 'stage failed');
});

test('announce-forwards and ports: the JSON of docs/protocol.md, field for field; each forward read strictly on both sides', () => {
  const f = { hostPort: 18080, containerPort: 5173, kind: 'forward' } as const;
  assert.equal(
    wire(encodeControlRequest(ANNOUNCE_FORWARDS_METHOD, { forwards: [f, { hostPort: 1455, containerPort: 1455, kind: 'login' }] })),
    '{"method":"announce-forwards","forwards":[{"hostPort":18080,"containerPort":5173,"kind":"forward"},{"hostPort":1455,"containerPort":1455,"kind":"login"}]}',
  );
  assert.throws(() => encodeControlRequest(ANNOUNCE_FORWARDS_METHOD, { forwards: [] }), RangeError);
  assert.equal(wire(encodeControlRequest(PORTS_METHOD, {})), '{"method":"ports"}');
  assert.equal(JSON.stringify(controlReplyMessage(ANNOUNCE_FORWARDS_METHOD, { listed: 1 })), '{"ok":true,"listed":1}');
  assert.equal(
    JSON.stringify(controlReplyMessage(PORTS_METHOD, { forwards: [f] })),
    '{"ok":true,"forwards":[{"hostPort":18080,"containerPort":5173,"kind":"forward"}]}',
  );

  const code = (r: { ok: boolean; code?: string }): string | undefined => (r.ok ? undefined : r.code);
  assert.deepEqual(ANNOUNCE_FORWARDS_METHOD.parseParams({ method: 'announce-forwards', forwards: [f] }), { ok: true, params: { forwards: [f] } });
  assert.deepEqual(ANNOUNCE_FORWARDS_METHOD.parseParams({ method: 'announce-forwards', forwards: [{ ...f, kind: 'offered' }] }), {
    ok: true,
    params: { forwards: [{ ...f, kind: 'offered' }] },
  });
  for (const forwards of [
    undefined,
    [],
    f,
    Array.from({ length: 17 }, () => f),
    [{ ...f, hostPort: 0 }],
    [{ ...f, containerPort: 65536 }],
    [{ ...f, hostPort: '18080' }],
    [{ ...f, hostPort: 1.5 }],
    [{ ...f, kind: 'tunnel' }],
    [{ ...f, host: '10.0.0.1' }],
    [null],
    [[18080, 5173]],
  ])
    assert.equal(code(ANNOUNCE_FORWARDS_METHOD.parseParams({ method: 'announce-forwards', forwards })), 'E_BAD_REQUEST', JSON.stringify(forwards));
  assert.equal(code(ANNOUNCE_FORWARDS_METHOD.parseParams({ method: 'announce-forwards', forwards: [f], url: 'http://x/' })), 'E_BAD_REQUEST');

  const bad = (v: unknown): void =>
    assert.throws(
      () => readControlReply(PORTS_METHOD, v),
      (e: unknown) => hasCode(e, 'E_CONTROL_REPLY'),
      JSON.stringify(v),
    );
  assert.deepEqual(readControlReply(PORTS_METHOD, { ok: true, forwards: [] }), { forwards: [] });
  assert.deepEqual(readControlReply(PORTS_METHOD, { ok: true, forwards: [f] }), { forwards: [f] });
  for (const forwards of [
    undefined,
    {},
    [{ ...f, hostPort: 70000 }],
    [{ ...f, kind: 'x' }],
    [{ ...f, url: 'http://evil/' }],
    Array.from({ length: 1025 }, () => f),
  ])
    bad({ ok: true, forwards });
  assert.deepEqual(readControlReply(ANNOUNCE_FORWARDS_METHOD, { ok: true, listed: 2 }), { listed: 2 });
  for (const listed of [undefined, -1, 1.5, '2', 17])
    assert.throws(
      () => readControlReply(ANNOUNCE_FORWARDS_METHOD, { ok: true, listed }),
      (e: unknown) => hasCode(e, 'E_CONTROL_REPLY'),
    );
});
