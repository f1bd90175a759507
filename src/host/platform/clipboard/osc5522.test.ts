// The kitty clipboard protocol's read side (osc5522.ts): the request, the packet decoder, the read assembler
// and the extractor that takes the terminal's answers out of the keyboard stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decrpmSupported, encodeReadRequest, MAX_PACKET_BYTES, parsePacket, ReadAssembler, ReplyExtractor } from './osc5522.ts';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');
const body = (meta: string, payload?: string): Buffer => Buffer.from(`5522;${meta}${payload === undefined ? '' : `;${payload}`}`, 'latin1');
const packet = (meta: string, payload?: string): string => `\x1b]5522;${meta}${payload === undefined ? '' : `;${payload}`}\x1b\\`;

/** The spec's answer to a read of `mime`: OK, the data in chunks of at most `chunk` bytes, DONE. */
function answer(mime: string, data: Buffer, chunk: number, id?: string): string[] {
  const idf = id === undefined ? '' : `:id=${id}`;
  const out = [packet(`type=read:status=OK${idf}`)];
  for (let i = 0; i < data.length; i += chunk) out.push(packet(`type=read:status=DATA:mime=${b64(mime)}${idf}`, b64(data.subarray(i, i + chunk))));
  out.push(packet(`type=read:status=DONE${idf}`));
  return out;
}

test('osc5522: the read request names the types in base64, with its id and a paste event password', () => {
  assert.equal(encodeReadRequest(['image/png'], { id: 'j-1' }).toString('latin1'), `\x1b]5522;type=read:id=j-1;${b64('image/png')}\x1b\\`);
  assert.equal(
    encodeReadRequest(['image/png'], { pw: b64('secret'), name: 'Paste event' }).toString('latin1'),
    `\x1b]5522;type=read:pw=${b64('secret')}:name=${b64('Paste event')};${b64('image/png')}\x1b\\`,
  );
  assert.throws(() => encodeReadRequest(['image/png'], { id: 'a;b' }), TypeError);
  assert.throws(() => encodeReadRequest(['image/png'], { pw: 'a:b;' }), TypeError);
});

test('osc5522: a packet decodes its fields and payload; malformed ones are refused as a whole', () => {
  const p = parsePacket(body(`type=read:status=DATA:mime=${b64('image/png')}:id=x1`, b64('PNGDATA')));
  assert.deepEqual(p, { type: 'read', status: 'DATA', mime: 'image/png', pw: null, id: 'x1', loc: null, data: Buffer.from('PNGDATA') });
  // A password is kept as sent (base64 of any bytes), to be quoted back.
  assert.equal(parsePacket(body(`type=read:status=OK:pw=${b64(Buffer.from([0, 255, 10]))}`))?.pw, b64(Buffer.from([0, 255, 10])));
  assert.equal(parsePacket(body('type=read:status=OK:pw=abc')), null, 'not base64');
  for (const bad of [
    body('type=read:status=DATA', 'not base64!'),
    body('type=read:status=DATA', 'QQ'), // unpadded
    body(`type=read:status=DATA:mime=${b64('image/png\n')}`), // a control character in a field
    body('status=OK'), // no type
    body('type=read:status'), // a key without a value
    body('type=read:type=read'), // a key twice
    body('type=read:status=OK\x1b[31m'),
    Buffer.from('52;c;QQ=='),
    Buffer.concat([body('type=read:status=DATA', ''), Buffer.alloc(MAX_PACKET_BYTES, 0x41)]),
  ]) {
    assert.equal(parsePacket(bad), null, JSON.stringify(bad.toString('latin1').slice(0, 60)));
  }
});

test('osc5522: DECRPM 1 and 2 say supported, 0 and 4 do not', () => {
  assert.deepEqual([0, 1, 2, 3, 4].map(decrpmSupported), [false, true, true, false, false]);
});

function assemble(packets: string[], maxBytes = 1 << 20, id?: string) {
  const a = new ReadAssembler({ maxBytes, ...(id === undefined ? {} : { id }) });
  let last: ReturnType<ReadAssembler['push']> = { kind: 'more' };
  for (const s of packets) {
    const p = parsePacket(Buffer.from(s.slice(2, -2), 'latin1'));
    assert.notEqual(p, null, s);
    last = a.push(p!);
    if (last.kind !== 'more') break;
  }
  return last;
}

test('osc5522: the assembler reassembles chunks; an error status, a missing OK and the size cap end it', () => {
  const data = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
  const done = assemble(answer('image/png', data, 4096));
  assert.equal(done.kind, 'done');
  assert.deepEqual(done.kind === 'done' ? done.parts.get('image/png') : null, data);
  const empty = assemble([packet('type=read:status=OK'), packet('type=read:status=DONE')]);
  assert.equal(empty.kind === 'done' && empty.parts.size, 0);
  for (const status of ['EPERM', 'EBUSY', 'ENOSYS', 'EIO', 'EINVAL'] as const) {
    assert.deepEqual(assemble([packet(`type=read:status=${status}`)]), { kind: 'error', status, known: status });
  }
  assert.deepEqual(assemble([packet('type=read:status=EWHATEVER')]), { kind: 'error', status: 'EWHATEVER', known: null });
  assert.equal(assemble([packet(`type=read:status=DATA:mime=${b64('image/png')}`, b64('x'))]).kind, 'malformed');
  assert.equal(assemble(answer('image/png', data, 4096), 9_999).kind, 'too-large');
  // A reply with another read's id is not this read's.
  const a = new ReadAssembler({ maxBytes: 100, id: 'mine' });
  assert.equal(a.accepts(parsePacket(body('type=read:status=OK:id=other'))!), false);
  assert.equal(a.accepts(parsePacket(body('type=read:status=OK:id=mine'))!), true);
});

test('osc5522: a paste event lists the offered types (kitty: one DATA of "." with the list)', () => {
  const ev = assemble([
    packet(`type=read:status=OK:pw=${b64('one-use')}`),
    packet(`type=read:status=DATA:mime=${b64('.')}`, b64('text/plain image/png')),
    packet('type=read:status=DONE'),
  ]);
  assert.equal(ev.kind, 'done');
  if (ev.kind !== 'done') return;
  assert.equal(ev.pw, b64('one-use'));
  assert.equal(ev.parts.get('.')?.toString(), 'text/plain image/png');
});

test('osc5522: in a type listing a DATA packet without its mime is the list; in a read it is malformed', () => {
  const p = (s: string) => parsePacket(Buffer.from(s.slice(2, -2), 'latin1'))!;
  const listing = new ReadAssembler({ maxBytes: 1000, listing: true });
  listing.push(p(packet('type=read:status=OK')));
  listing.push(p(packet('type=read:status=DATA', b64('image/png'))));
  const done = listing.push(p(packet('type=read:status=DONE')));
  assert.equal(done.kind === 'done' && done.parts.get('.')?.toString(), 'image/png');
  assert.equal(assemble([packet('type=read:status=OK'), packet('type=read:status=DATA', b64('x'))]).kind, 'malformed');
});

test('osc5522 property: the decoder never throws on arbitrary bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, prefixed) => {
      const b = prefixed ? Buffer.concat([Buffer.from('5522;'), bytes]) : Buffer.from(bytes);
      const p = parsePacket(b);
      if (p !== null) new ReadAssembler({ maxBytes: 1000 }).push(p);
      const x = new ReplyExtractor();
      const got = x.push(b);
      x.push(Buffer.from(bytes));
      x.release();
      assert.ok(got.rest.length <= b.length);
    }),
    { numRuns: 500 },
  );
});

test('osc5522 property: chunked base64 split anywhere across reads, among keys, is reassembled exactly; keys pass in order', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 0, maxLength: 9000 }),
      fc.integer({ min: 1, max: 4096 }),
      fc.array(fc.integer({ min: 1, max: 9000 }), { maxLength: 12 }),
      fc.constantFrom('abc', 'x\x1b[A', ''),
      (bytes, chunk, cuts, keys) => {
        const data = Buffer.from(bytes);
        const stream = Buffer.from(keys + answer('image/png', data, chunk, 'r1').join('') + keys, 'latin1');
        const x = new ReplyExtractor();
        const bodies: Buffer[] = [];
        const rest: Buffer[] = [];
        let at = 0;
        for (const c of [...cuts.sort((p, q) => p - q), stream.length]) {
          const end = Math.min(stream.length, Math.max(at, c));
          const got = x.push(stream.subarray(at, end));
          bodies.push(...got.packets);
          rest.push(got.rest);
          at = end;
        }
        rest.push(x.release());
        assert.equal(Buffer.concat(rest).toString('latin1'), keys + keys);
        const a = new ReadAssembler({ maxBytes: 1 << 20, id: 'r1' });
        let o: ReturnType<ReadAssembler['push']> = { kind: 'more' };
        for (const b of bodies) o = a.push(parsePacket(b)!);
        assert.equal(o.kind, 'done');
        assert.deepEqual(o.kind === 'done' ? (o.parts.get('image/png') ?? Buffer.alloc(0)) : null, data);
      },
    ),
    { numRuns: 200 },
  );
});

test('osc5522: the extractor takes DECRPM 5522 out, split or whole, and leaves other DECRPMs to the keyboard', () => {
  const x = new ReplyExtractor();
  const a = x.push(Buffer.from('k\x1b[?55'));
  assert.deepEqual([a.decrpm, a.rest.toString()], [[], 'k']);
  const b = x.push(Buffer.from('22;2$yj\x1b[?2004;1$y'));
  assert.deepEqual([b.decrpm, b.rest.toString()], [[2], 'j\x1b[?2004;1$y']);
});

test('osc5522: a packet over the limit is dropped whole, up to its terminator, never passed on', () => {
  const x = new ReplyExtractor();
  const big = Buffer.alloc(MAX_PACKET_BYTES + 10, 0x41);
  const a = x.push(Buffer.concat([Buffer.from('a\x1b]5522;type=read:status=DATA;'), big]));
  assert.equal(a.rest.toString(), 'a');
  assert.equal(a.dropped, 1);
  const b = x.push(Buffer.from('AAAA\x1b\\b'));
  assert.deepEqual([b.rest.toString(), b.packets.length], ['b', 0]);
});
