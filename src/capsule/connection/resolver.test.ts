import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Offers } from './offers.ts';
import { resolveRequest } from './resolver.ts';
import { ScreenModel } from '../screen/screen-model.ts';

function model(t: { after: (fn: () => void) => void }, text: string): ScreenModel {
  const m = new ScreenModel({ rows: 5, cols: 40 });
  t.after(() => m.dispose());
  m.write(Buffer.from(text, 'utf8'));
  return m;
}

test('capsule resolver: a link at a cell is the OSC 8 target, else the trimmed URL token', async (t) => {
  const m = model(t, 'see https://example.com/a_(b)).\r\n\x1b]8;;https://other.example\x1b\\https://good.example\x1b]8;;\x1b\\\r\n');
  const offers = new Offers();
  assert.deepEqual(await resolveRequest(m, offers, 'link', { row: 0, col: 8 }), { kind: 'text', text: 'https://example.com/a_(b)' });
  assert.deepEqual(await resolveRequest(m, offers, 'link', { row: 1, col: 3 }), { kind: 'osc8', text: 'https://other.example' });
  assert.deepEqual(await resolveRequest(m, offers, 'link', { row: 0, col: 1 }), { kind: 'none', text: '' });
  assert.deepEqual(await resolveRequest(m, offers, 'link', { row: 4, col: 39 }), { kind: 'none', text: '' });
});

test('capsule resolver: null means the cursor, where the token just left of it counts', async (t) => {
  const m = model(t, '$ ls ./out/report.txt');
  const offers = new Offers();
  assert.deepEqual(await resolveRequest(m, offers, 'path', null), { kind: 'text', text: './out/report.txt' });
  assert.deepEqual(await resolveRequest(m, offers, 'link', null), { kind: 'none', text: '' });
});

test('capsule resolver: offered-link and offered-file answer the latest offer', async (t) => {
  const m = model(t, '');
  const offers = new Offers();
  assert.deepEqual(await resolveRequest(m, offers, 'offered-link', null), { kind: 'none', text: '' });
  offers.offerUrl('https://example.com/login');
  offers.offerFile('/work/out.png');
  assert.deepEqual(await resolveRequest(m, offers, 'offered-link', null), { kind: 'offer', text: 'https://example.com/login' });
  assert.deepEqual(await resolveRequest(m, offers, 'offered-file', null), { kind: 'offer', text: '/work/out.png' });
});

test('screen model: programModes follows mouse tracking, SGR, paste, focus and the alternate screen', async (t) => {
  const m = model(t, '\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?1049h');
  await m.settle();
  assert.deepEqual(m.programModes, { mouseTracking: true, sgrMouse: true, bracketedPaste: true, focusReporting: true, alternateScreen: true });
  m.write(Buffer.from('\x1b[?1000l\x1b[?1006l\x1b[?1049l'));
  await m.settle();
  assert.deepEqual(m.programModes, { mouseTracking: false, sgrMouse: false, bracketedPaste: true, focusReporting: true, alternateScreen: false });
});
