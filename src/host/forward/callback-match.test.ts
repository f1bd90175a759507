import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { callbackKey, MAX_REQUEST_LINE_BYTES, parseRequestLine, pickOwner, type RegisteredLink } from './callback-match.ts';

const line = (s: string): ReturnType<typeof parseRequestLine> => parseRequestLine(Buffer.from(s, 'latin1'));

test('callback request line: path and state of a complete line; incomplete until its newline; refused when not HTTP or too long', () => {
  assert.deepEqual(line('GET /callback?code=c&state=s%2F1 HTTP/1.1\r\nHost: x\r\n'), { kind: 'request', path: '/callback', state: 's/1' });
  assert.deepEqual(line('GET /cb HTTP/1.0\r\n'), { kind: 'request', path: '/cb', state: null });
  assert.deepEqual(line('GET /callback?state=abc'), { kind: 'incomplete' });
  assert.deepEqual(line(''), { kind: 'incomplete' });
  for (const bad of ['\r\n', 'GET http://evil/ HTTP/1.1\r\n', 'GET /a b HTTP/1.1\r\n', 'SSH-2.0-OpenSSH\r\n', 'GET /x HTTP/1.1 extra\r\n']) {
    assert.deepEqual(line(bad), { kind: 'invalid' }, JSON.stringify(bad));
  }
  assert.deepEqual(line(`GET /${'a'.repeat(MAX_REQUEST_LINE_BYTES)}`), { kind: 'invalid' }, 'no newline within the bound');
  assert.deepEqual(line(`GET /${'a'.repeat(MAX_REQUEST_LINE_BYTES)} HTTP/1.1\r\n`), { kind: 'invalid' }, 'a newline past the bound');
});

test('callback request line (property): never throws, and anything without a newline under the bound is incomplete', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
      const r = parseRequestLine(Buffer.from(bytes));
      assert.ok(['incomplete', 'invalid', 'request'].includes(r.kind));
      if (!bytes.includes(0x0a)) assert.equal(r.kind, 'incomplete');
      if (r.kind === 'request') assert.ok(r.path.startsWith('/'));
    }),
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.webPath(), (state, path) => {
      const target = `${path.startsWith('/') ? path : `/${path}`}?state=${encodeURIComponent(state)}`;
      const r = line(`GET ${target} HTTP/1.1\r\n`);
      if (r.kind === 'request') assert.equal(r.state, state);
    }),
  );
});

test("callback key: the link's state and its callback's path; a link that is the loopback URL itself names no path", () => {
  const redirect = encodeURIComponent('http://localhost:54545/callback');
  assert.deepEqual(callbackKey(`https://idp.example/authorize?client_id=c&redirect_uri=${redirect}&state=xyz`), { state: 'xyz', path: '/callback' });
  assert.deepEqual(callbackKey(`https://idp.example/authorize?redirect_uri=${redirect}`), { state: null, path: '/callback' });
  assert.deepEqual(callbackKey('http://localhost:54545/page?state=q'), { state: 'q', path: null });
  assert.deepEqual(callbackKey('not a url'), { state: null, path: null });
});

test('callback matching: by state (and path when named), then the last routed session, then the newest stateless link; else none', () => {
  const links: RegisteredLink<string>[] = [
    { state: 'a', path: '/callback', seq: 0, owner: 'one' },
    { state: 'b', path: '/callback', seq: 1, owner: 'two' },
  ];
  assert.equal(pickOwner(links, { path: '/callback', state: 'a' }, null), 'one');
  assert.equal(pickOwner(links, { path: '/callback', state: 'b' }, null), 'two');
  assert.equal(pickOwner(links, { path: '/other', state: 'a' }, null), null, 'the path the link named');
  assert.equal(pickOwner(links, { path: '/callback', state: 'zzz' }, null), null, 'an unknown state');
  assert.equal(pickOwner(links, { path: '/callback', state: null }, null), null, 'no state, nothing routed yet');
  assert.equal(pickOwner(links, { path: '/success', state: null }, 'one'), 'one', 'the page after the callback follows it');
  assert.equal(pickOwner(links, { path: '/success', state: null }, 'gone'), null, 'not to a session that left');
  const stateless: RegisteredLink<string>[] = [
    ...links,
    { state: null, path: '/callback', seq: 2, owner: 'three' },
    { state: null, path: null, seq: 3, owner: 'four' },
  ];
  assert.equal(pickOwner(stateless, { path: '/callback', state: null }, null), 'four', 'the last opened stateless link wins');
  assert.equal(pickOwner(stateless, { path: '/callback', state: 'zzz' }, null), 'four');
  assert.equal(pickOwner(stateless, { path: '/callback', state: 'a' }, null), 'one', 'a matching state before any stateless link');
  assert.equal(pickOwner(stateless.slice(0, 3), { path: '/x', state: null }, null), null);
  // The same state opened twice: the newest link gets it.
  assert.equal(pickOwner([...links, { state: 'a', path: null, seq: 5, owner: 'five' }], { path: '/callback', state: 'a' }, null), 'five');
});
