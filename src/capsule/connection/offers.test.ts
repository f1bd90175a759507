import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { ControlMethods } from '../session/control-methods.ts';
import { Offers, registerOfferMethods } from './offers.ts';

function setup() {
  const control = new ControlMethods();
  const offers = new Offers();
  const notices: string[] = [];
  registerOfferMethods(control, offers, (_level, text) => notices.push(text));
  const call = async (req: unknown) => (await control.dispatch(req, {} as Socket)).reply;
  return { offers, notices, call };
}

test('offers: offer-url records the normalised link and notifies without the query', async () => {
  const { offers, notices, call } = setup();
  assert.deepEqual(await call({ method: 'offer-url', url: 'HTTPS://Example.com/login?state=secret#frag' }), { ok: true });
  assert.equal(offers.url, 'https://example.com/login?state=secret#frag');
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /^Link offered: https:\/\/example\.com\/login\?…#…/);
  assert.doesNotMatch(notices[0]!, /secret|frag/);
  assert.deepEqual(await call({ method: 'offers' }), { ok: true, file: null, url: 'https://example.com/login?state=secret#frag' });
});

test('offers: offer-url refuses what the host would refuse, keeping the previous offer', async () => {
  const { offers, notices, call } = setup();
  await call({ method: 'offer-url', url: 'https://example.com/' });
  for (const [url, code] of [
    ['javascript:alert(1)', 'E_URL_SCHEME'],
    ['file:///etc/passwd', 'E_URL_SCHEME'],
    ['https://u:p@example.com/', 'E_URL_CREDENTIALS'],
    ['https://example.com/\u202e', 'E_URL_CONTROL'],
    ['-https://example.com', 'E_URL_INVALID'],
  ] as const) {
    const reply = await call({ method: 'offer-url', url });
    assert.equal(reply.ok, false, url);
    assert.equal((reply as { code: string }).code, code, url);
  }
  assert.equal(offers.url, 'https://example.com/');
  assert.equal(notices.length, 1);
  assert.equal((await call({ method: 'offer-url' })).ok, false);
});

test('offers: offer-file records an absolute path and notifies with the path made inert', async () => {
  const { offers, notices, call } = setup();
  assert.deepEqual(await call({ method: 'offer-file', path: '/work/out\x1b[2J.png' }), { ok: true });
  assert.equal(offers.file, '/work/out\x1b[2J.png');
  assert.equal(notices[0], 'File offered: /work/out\\x1b[2J.png (palette: Pull offered file)');
  assert.equal((await call({ method: 'offer-file', path: 'relative.png' })).ok, false);
  assert.equal(offers.file, '/work/out\x1b[2J.png');
});
