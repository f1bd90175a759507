import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIRM_ARM_MS, ConfirmController } from './confirm-controller.ts';

function setup() {
  const written: string[] = [];
  let closed = 0;
  const clock = { t: 1000 };
  const c = new ConfirmController({
    terminal: { write: (b: Buffer | string) => (written.push(String(b)), true), size: () => ({ rows: 30, cols: 100 }) },
    closed: () => closed++,
    now: () => clock.t,
  });
  return { c, written, closed: () => closed, clock };
}

const bytes = (s: string) => ({ type: 'bytes' as const, bytes: Buffer.from(s, 'latin1') });

test('the prompt answers yes only on Enter, and is drawn by the host with its resets first', async () => {
  const { c, written, closed, clock } = setup();
  const answer = c.ask({ kind: 'url', target: 'https://example.com/x' });
  assert.equal(c.isOpen, true);
  assert.ok(written[0]?.startsWith('\x1b7\x1b[?6l'), JSON.stringify(written[0]));
  assert.match(written[0] ?? '', /example\.com/u);
  // A paste, a mouse report, the palette key and typed text do nothing.
  c.handle({ type: 'paste', content: Buffer.from('\r'), raw: Buffer.from('\x1b[200~\r\x1b[201~') });
  c.handle({ type: 'palette-key', source: 'c0', raw: Buffer.from([0x1c]) });
  c.handle(bytes('y\r'));
  assert.equal(c.isOpen, true);
  clock.t += CONFIRM_ARM_MS;
  c.handle(bytes('\r'));
  assert.equal(await answer, true);
  assert.equal(closed(), 1);
});

test('an Enter that comes right as the prompt appears (typed for the program) does not confirm; Esc still cancels at once', async () => {
  const { c, clock } = setup();
  const answer = c.ask({ kind: 'export', target: '/w/planted.sh', verb: 'export and open' });
  clock.t += 80;
  c.handle(bytes('\r'));
  clock.t += CONFIRM_ARM_MS - 81;
  c.handle(bytes('\r'));
  assert.equal(c.isOpen, true, 'an Enter within the first CONFIRM_ARM_MS is ignored');
  clock.t += 1;
  c.handle(bytes('\r'));
  assert.equal(await answer, true);
  const second = c.ask({ kind: 'url', target: 'https://example.com/' });
  c.handle(bytes('\x1b'));
  assert.equal(await second, false);
});

test('Esc answers no; a second question while one is up, and a dispose, answer no', async () => {
  const { c } = setup();
  const first = c.ask({ kind: 'export', target: '/w/report.pdf' });
  assert.equal(await c.ask({ kind: 'url', target: 'https://example.com/' }), false);
  c.handle(bytes('\x1b'));
  assert.equal(await first, false);
  const third = c.ask({ kind: 'url', target: 'https://example.com/' });
  c.dispose();
  assert.equal(await third, false);
  assert.equal(await c.ask({ kind: 'url', target: 'https://example.com/' }), false);
});
