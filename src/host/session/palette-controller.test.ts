import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PaletteOpening, ShownTarget } from './feature-session.ts';
import { PaletteController } from './palette-controller.ts';

function setup(cols = 120) {
  const written: string[] = [];
  const runs: Array<ShownTarget | undefined> = [];
  const pendingChoices: string[] = [];
  const openings: PaletteOpening[] = [];
  const size = { rows: 30, cols };
  const c = new PaletteController({
    terminal: { write: (b: Buffer) => written.push(b.toString('utf8')) > 0, size: () => size },
    closed: () => undefined,
    notify: () => undefined,
  });
  c.onOpen((o) => void openings.push(o));
  c.register({
    id: 'offer',
    title: 'Open offered link',
    key: 'u',
    readsTarget: { pendingTitle: 'Open offered link (reading the offer…)', whilePending: () => (pendingChoices.push('u'), 'Still reading the offer') },
    run: (_argument, shown) => void runs.push(shown),
  });
  const press = (key: string): Buffer => c.handle({ type: 'bytes', bytes: Buffer.from(key) });
  return { c, written, runs, pendingChoices, openings, size, press, screen: () => written.at(-1) ?? '' };
}

test('palette controller: an entry with a target is pending at each opening until its target is shown; its key then runs nothing', () => {
  const { c, runs, pendingChoices, openings, press, screen } = setup();
  c.open();
  assert.match(screen(), /Open offered link \(reading the offer…\)/);
  press('u');
  assert.equal(c.isOpen, true, 'the palette stays up');
  assert.deepEqual(runs, []);
  assert.deepEqual(pendingChoices, ['u']);
  assert.match(screen(), /Still reading the offer/);
  c.showTarget('offer', openings[0]!, { title: 'Open offered link: https://example.com/', target: 'https://example.com/', literal: true });
  assert.match(screen(), /Open offered link: https:\/\/example\.com\//);
  assert.doesNotMatch(screen(), /Still reading/);
  press('u');
  assert.equal(c.isOpen, false);
  assert.deepEqual(runs, [{ target: 'https://example.com/', seen: true }]);

  // The next opening starts pending again: the last target is never choosable unseen.
  c.open();
  assert.match(screen(), /reading the offer…/);
  // A late answer for the closed opening changes nothing.
  c.showTarget('offer', openings[0]!, { title: 'Open offered link: https://late.example/', target: 'https://late.example/', literal: true });
  assert.doesNotMatch(screen(), /late\.example/);
  press('u');
  assert.equal(runs.length, 1);
  press('\x1b');
  // Closed: an answer for the opening that just closed is dropped too.
  c.showTarget('offer', openings[1]!, { title: 'Open offered link: https://late.example/', target: 'https://late.example/', literal: true });
  c.open();
  assert.doesNotMatch(screen(), /late\.example/);
});

test('palette controller: a target cut on the screen, or not drawn as it is, is not seen', () => {
  const { c, runs, openings, press, size } = setup(60);
  c.open();
  c.showTarget('offer', openings[0]!, {
    title: 'Open offered link: http://localhost:7803/',
    suffix: ' (forwards port 7803)',
    target: 'http://localhost:7803/',
    literal: true,
  });
  press('u');
  assert.deepEqual(runs, [{ target: 'http://localhost:7803/', seen: false }], 'cut on a 60-column screen');
  size.cols = 160;
  c.open();
  c.showTarget('offer', openings[1]!, {
    title: 'Open offered link: http://localhost:7803/',
    suffix: ' (forwards port 7803)',
    target: 'http://localhost:7803/',
    literal: true,
  });
  press('u');
  assert.deepEqual(runs.at(-1), { target: 'http://localhost:7803/', seen: true });
  c.open();
  c.showTarget('offer', openings[2]!, { title: 'Open offered link: https://xn--e1afmkfd.example/', target: 'https://xn--e1afmkfd.example/', literal: false });
  press('u');
  assert.deepEqual(runs.at(-1), { target: 'https://xn--e1afmkfd.example/', seen: false });
  // Nothing offered: the entry is choosable and names no target.
  c.open();
  c.showTarget('offer', openings[3]!, { title: 'Open offered link', target: null, literal: false });
  press('u');
  assert.deepEqual(runs.at(-1), { target: null, seen: false });
});
