/**
 * The Links frame (feature `link-list`, docs/protocol.md 8.15): the largest list fits its cap exactly, and a
 * list the encoder would never build (too many links, a target too long, an unknown source) is a payload
 * error, not a frame the host acts on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LINKS_FRAME_CAP,
  MAX_LISTED_LINKS,
  MAX_LISTED_URL_BYTES,
  SERVER_TAGS,
  capForTag,
  decodeServerPayload,
  encodeServerFrame,
  FRAME_HEADER_BYTES,
  ProtocolError,
  type ListedLink,
} from './index.ts';

const longest = `https://example.com/${'a'.repeat(MAX_LISTED_URL_BYTES - 20)}`;

test('Links frame: the most links with the longest targets fill the cap exactly', () => {
  const links: ListedLink[] = Array.from({ length: MAX_LISTED_LINKS }, (_, i) => ({ row: i, col: 1, cells: 3, source: 'text', url: longest }));
  const b = encodeServerFrame({ type: 'Links', requestId: 9n, links });
  assert.equal(b.length - FRAME_HEADER_BYTES, LINKS_FRAME_CAP);
  assert.equal(capForTag(SERVER_TAGS.Links), LINKS_FRAME_CAP);
  assert.deepEqual(decodeServerPayload(SERVER_TAGS.Links, b.subarray(FRAME_HEADER_BYTES)), { type: 'Links', requestId: 9n, links });
});

test('Links frame: the encoder refuses more links than the cap and an over-long target', () => {
  const one: ListedLink = { row: 0, col: 0, cells: 1, source: 'osc8', url: 'https://a.example/' };
  assert.throws(() => encodeServerFrame({ type: 'Links', requestId: 1n, links: Array.from({ length: MAX_LISTED_LINKS + 1 }, () => one) }), RangeError);
  assert.throws(() => encodeServerFrame({ type: 'Links', requestId: 1n, links: [{ ...one, url: `${longest}b` }] }), RangeError);
});

function payloadError(hex: string): string {
  try {
    decodeServerPayload(SERVER_TAGS.Links, Buffer.from(hex.replaceAll(' ', ''), 'hex'));
  } catch (e) {
    assert.ok(e instanceof ProtocolError);
    return e.code;
  }
  return 'decoded';
}

test('Links frame: a count over the cap, an unknown source, an empty or short target, trailing bytes are payload errors', () => {
  const id = '0000000000000001';
  assert.equal(payloadError(`${id} ${(MAX_LISTED_LINKS + 1).toString(16)}`), 'E_BAD_VALUE');
  assert.equal(payloadError(`${id} 01 0000 0000 0001 03 0001 61`), 'E_BAD_ENUM');
  assert.equal(payloadError(`${id} 01 0000 0000 0001 01 0000`), 'E_BAD_LENGTH');
  assert.equal(payloadError(`${id} 01 0000 0000 0001 01 0005 6161`), 'E_PAYLOAD_SHORT');
  assert.equal(payloadError(`${id} 00 00`), 'E_PAYLOAD_TRAILING');
  assert.equal(payloadError(`${id} 01 0000 0000 0001 01 0001 ff`), 'E_BAD_UTF8');
});
