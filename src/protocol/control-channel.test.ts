import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ControlMessageDecoder, encodeControlMessage, MAX_CONTROL_MESSAGE_BYTES, PROTOCOL_CODES, ProtocolError } from './index.ts';

function isProtocolError(code: string) {
  return (e: unknown): boolean => e instanceof ProtocolError && e.code === code && e.kind === 'framing';
}

test('a control message is a u32 big-endian length and UTF-8 JSON, starting with the 0x00 channel byte', () => {
  const b = encodeControlMessage({ method: 'status' });
  assert.equal(b.toString('hex'), `00000013${Buffer.from('{"method":"status"}').toString('hex')}`);
  assert.equal(b[0], 0x00);
  assert.deepEqual(new ControlMessageDecoder().push(b), [{ method: 'status' }]);
});

test('control messages round-trip under any slicing, several per read', () => {
  fc.assert(
    fc.property(
      fc.array(fc.jsonValue({ noUnicodeString: false }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 16 }),
      (values, sizes) => {
        const stream = Buffer.concat(values.map(encodeControlMessage));
        const d = new ControlMessageDecoder();
        const got: unknown[] = [];
        let at = 0;
        for (let i = 0; at < stream.length; i++) {
          const n = sizes[i % sizes.length]!;
          got.push(...d.push(stream.subarray(at, at + n)));
          at += n;
        }
        // JSON.stringify maps -0 to 0; compare through the same text.
        assert.deepEqual(
          got,
          values.map((v) => JSON.parse(JSON.stringify(v)) as unknown),
        );
        assert.equal(d.bufferedBytes, 0);
      },
    ),
  );
  const one = encodeControlMessage({ ok: true, name: 'ü' });
  const d = new ControlMessageDecoder();
  const got: unknown[] = [];
  for (const byte of one) got.push(...d.push(Buffer.from([byte])));
  assert.deepEqual(got, [{ ok: true, name: 'ü' }]);
});

test('a message of exactly 4 MiB is accepted; a declared 4 MiB + 1 fails on its 4 length bytes', () => {
  const big = 'a'.repeat(MAX_CONTROL_MESSAGE_BYTES - 2);
  const b = encodeControlMessage(big);
  assert.equal(b.length, 4 + MAX_CONTROL_MESSAGE_BYTES);
  assert.deepEqual(new ControlMessageDecoder().push(b), [big]);
  assert.throws(() => encodeControlMessage(`${big}a`), RangeError);

  const d = new ControlMessageDecoder();
  const h = Buffer.alloc(4);
  h.writeUInt32BE(MAX_CONTROL_MESSAGE_BYTES + 1);
  assert.deepEqual(d.push(h.subarray(0, 3)), []);
  assert.throws(() => d.push(h.subarray(3)), isProtocolError(PROTOCOL_CODES.frameTooLarge));
  assert.throws(() => new ControlMessageDecoder().push(Buffer.from('ffffffff', 'hex')), isProtocolError(PROTOCOL_CODES.frameTooLarge));
});

test('a message that is not UTF-8 or not JSON is a protocol error', () => {
  assert.throws(() => new ControlMessageDecoder().push(Buffer.from('00000002ffff', 'hex')), isProtocolError(PROTOCOL_CODES.badUtf8));
  assert.throws(() => new ControlMessageDecoder().push(Buffer.from('000000027b7b', 'hex')), isProtocolError(PROTOCOL_CODES.badValue));
});

test('bytes after a message stay buffered for takeRest, so the connection can switch to frames', () => {
  const d = new ControlMessageDecoder();
  const rest = Buffer.from('8400000000', 'hex');
  const first = d.next();
  assert.equal(first, undefined);
  assert.deepEqual(d.push(Buffer.concat([encodeControlMessage({ ok: true }), rest.subarray(0, 3)])), [{ ok: true }]);
  assert.deepEqual(d.takeRest(), rest.subarray(0, 3));
  assert.equal(d.bufferedBytes, 0);
});

test('random bytes make the control decoder return messages or throw only ProtocolError', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (a, honest) => {
      // An honest length prefix sends the random bytes through the UTF-8 and JSON checks.
      const h = Buffer.alloc(4);
      h.writeUInt32BE(a.length);
      try {
        new ControlMessageDecoder().push(honest ? Buffer.concat([h, a]) : Buffer.from(a));
      } catch (e) {
        assert.ok(e instanceof ProtocolError, String(e));
      }
    }),
  );
});
