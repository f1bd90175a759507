import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InputEvent } from '../terminal/input-scan.ts';
import { ModalStack } from './modal-stack.ts';

function setup() {
  const seen: string[] = [];
  const prompt = { isOpen: false, handle: (ev: InputEvent) => void seen.push(`prompt ${ev.type}`), redraw: () => void seen.push('prompt redraw') };
  const palette = {
    isOpen: false,
    isShown: false,
    handle: (ev: InputEvent) => (seen.push(`palette ${ev.type}`), Buffer.from('rest')),
    redraw: () => void seen.push('palette redraw'),
  };
  const modals = new ModalStack({ prompt, palette, drawOverlay: () => void seen.push('overlay draw') });
  const overlay = { draw: () => '', handle: (ev: InputEvent) => void seen.push(`overlay ${ev.type}`) };
  return { seen, prompt, palette, modals, overlay };
}

const key: InputEvent = { type: 'bytes', bytes: Buffer.from('x') };
const reply: InputEvent = { type: 'reply', kind: 'focus', raw: Buffer.from('\x1b[I') };

test('modal stack: with nothing up, nothing takes input, holds output or is redrawn', () => {
  const s = setup();
  assert.equal(s.modals.take(key), null);
  assert.equal(s.modals.anyOpen, false);
  assert.equal(s.modals.holdsOutput(true), false);
  assert.equal(s.modals.redraw(), false);
  assert.deepEqual(s.seen, []);
});

test('modal stack: the prompt takes every event, terminal replies too, above the overlay and the palette', () => {
  const s = setup();
  s.prompt.isOpen = true;
  s.palette.isOpen = true;
  s.modals.showOverlay(s.overlay);
  assert.deepEqual(s.modals.take(key), Buffer.alloc(0));
  assert.deepEqual(s.modals.take(reply), Buffer.alloc(0));
  assert.equal(s.modals.redraw(), true);
  assert.deepEqual(s.seen, ['prompt bytes', 'prompt reply', 'prompt redraw']);
  assert.equal(s.modals.promptOpen, true);
  assert.equal(s.modals.holdsOutput(true), true);
});

test('modal stack: input goes to the overlay before the palette, a resize redraws the palette first; neither takes a reply', () => {
  const s = setup();
  s.palette.isOpen = true;
  s.modals.showOverlay(s.overlay);
  assert.deepEqual(s.modals.take(key), Buffer.alloc(0));
  assert.equal(s.modals.take(reply), null);
  s.modals.redraw();
  assert.deepEqual(s.seen, ['overlay bytes', 'palette redraw']);
  assert.equal(s.modals.hideOverlay(s.overlay), true);
  assert.equal(s.modals.hideOverlay(s.overlay), false, 'taken down once');
  assert.deepEqual(s.modals.take(key), Buffer.from('rest'), 'the palette gives back the keys after the one that closed it');
  s.palette.isOpen = false;
  s.modals.showOverlay(s.overlay);
  s.modals.redraw();
  assert.deepEqual(s.seen.slice(-2), ['palette bytes', 'overlay draw']);
});

test('modal stack: the palette holds output from its opening, or only once drawn with held replies; notices wait while any is up', () => {
  const s = setup();
  s.palette.isOpen = true;
  assert.equal(s.modals.anyOpen, true);
  assert.equal(s.modals.holdsOutput(false), true);
  assert.equal(s.modals.holdsOutput(true), false);
  s.palette.isShown = true;
  assert.equal(s.modals.holdsOutput(true), true);
  s.palette.isOpen = false;
  s.palette.isShown = false;
  const other = { draw: () => '', handle: () => undefined };
  s.modals.showOverlay(s.overlay);
  s.modals.showOverlay(other);
  assert.equal(s.modals.hideOverlay(s.overlay), false, 'a second overlay replaced the first');
  assert.equal(s.modals.anyOpen, true);
  assert.equal(s.modals.holdsOutput(false), true);
});
