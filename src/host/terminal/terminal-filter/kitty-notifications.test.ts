import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TerminalFilter } from './filter.ts';
import type { FilterEvent } from './context.ts';
import { KittyNotifications, MAX_NOTIFICATION_BYTES, MAX_PENDING_IDS, PENDING_MAX_MS, parseOsc99Metadata } from './kitty-notifications.ts';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

test('OSC 99 metadata: the keys jackin reads, the others accepted and ignored, malformed ones refused', () => {
  assert.deepEqual(parseOsc99Metadata(''), { id: '', more: false, payload: 'title', base64: false });
  assert.deepEqual(parseOsc99Metadata('i=1:d=0'), { id: '1', more: true, payload: 'title', base64: false });
  assert.deepEqual(parseOsc99Metadata('i=build:d=1:p=body:e=1:u=2:o=unfocused:a=-focus,report:c=1:w=5000:t=im.received:s=system:f=YXBw:n=aWNvbg=='), {
    id: 'build',
    more: false,
    payload: 'body',
    base64: true,
  });
  for (const bad of [
    'i',
    'i=1:',
    '=1',
    'ii=1',
    'i=a;b',
    'i=a b',
    'd=2',
    'e=yes',
    `i=${'x'.repeat(65)}`,
    Array.from({ length: 33 }, () => 'u=1').join(':'),
    'i=\x1b',
  ]) {
    assert.equal(parseOsc99Metadata(bad), null, JSON.stringify(bad));
  }
});

test("kitty notifications: the specification's examples: one text; title and body joined by i= and d=; base64", () => {
  const k = new KittyNotifications(() => 0);
  assert.deepEqual(k.accept(';Hello world'), { kind: 'complete', title: 'Hello world', body: '' });
  assert.deepEqual(k.accept('i=1:d=0;Hello world'), { kind: 'pending' });
  assert.deepEqual(k.accept('i=1:d=1:p=body;This is cool'), { kind: 'complete', title: 'Hello world', body: 'This is cool' });
  assert.deepEqual(k.accept(`i=2:d=0:e=1;${b64('Wörld ')}`), { kind: 'pending' });
  assert.deepEqual(k.accept(`i=2:d=0:e=1;${b64('title')}`), { kind: 'pending' });
  // A UTF-8 character split across two base64 chunks is joined whole.
  const check = Buffer.from('✓', 'utf8');
  assert.deepEqual(k.accept(`i=2:d=0:p=body:e=1;${check.subarray(0, 1).toString('base64')}`), { kind: 'pending' });
  assert.deepEqual(k.accept(`i=2:p=body:e=1;${check.subarray(1).toString('base64')}`), { kind: 'complete', title: 'Wörld title', body: '✓' });
  assert.equal(k.pendingIds, 0);
});

test('kitty notifications: icons, buttons, queries, alive and close are ignored and never complete or answer anything', () => {
  const k = new KittyNotifications(() => 0);
  assert.deepEqual(k.accept('i=q:p=?;'), { kind: 'ignored', what: 'OSC 99 p=?' });
  assert.deepEqual(k.accept('i=q:p=alive;'), { kind: 'ignored', what: 'OSC 99 p=alive' });
  assert.deepEqual(k.accept('i=1:p=close;'), { kind: 'ignored', what: 'OSC 99 p=close' });
  assert.deepEqual(k.accept('i=3:p=icon;aWNvbg=='), { kind: 'ignored', what: 'OSC 99 p=icon' });
  assert.deepEqual(k.accept('i=3:d=0:p=icon:g=cache;aWNvbg=='), { kind: 'pending' });
  assert.deepEqual(k.accept('i=3:d=0:p=buttons;Yes\u2028No'), { kind: 'pending' });
  assert.deepEqual(k.accept('i=3:d=0;Title'), { kind: 'pending' });
  assert.deepEqual(k.accept('i=3:p=close;'), { kind: 'ignored', what: 'OSC 99 p=close' });
  // The last chunk may be any payload: it ends the notification, its own content unused.
  assert.deepEqual(k.accept('i=3:p=icon;aWNvbg=='), { kind: 'complete', title: 'Title', body: '' });
  assert.deepEqual(k.accept('i=4:d=0;x'), { kind: 'pending' });
  assert.deepEqual(k.accept('i=4:e=1;not base64!'), { kind: 'ignored', what: 'OSC 99 (bad base64)' });
  assert.equal(k.pendingIds, 0, 'bad base64 drops the notification it belonged to');
  assert.deepEqual(k.accept('i=5;no'), { kind: 'complete', title: 'no', body: '' });
  assert.deepEqual(k.accept('i=5:x=1:y=2'), { kind: 'ignored', what: 'OSC 99 without payload' });
});

test('kitty notifications: bounded: the joined text, the ids pending (oldest dropped) and how long one waits', () => {
  let now = 0;
  const k = new KittyNotifications(() => now);
  const chunk = 'a'.repeat(1000);
  for (let i = 0; i < 10; i++) assert.deepEqual(k.accept(`i=big:d=0;${chunk}`), { kind: 'pending' });
  const big = k.accept(`i=big:p=body;${chunk}`);
  assert.equal(big.kind, 'complete');
  if (big.kind === 'complete') assert.equal(big.title.length + big.body.length, MAX_NOTIFICATION_BYTES);
  // Chunks past the cap, or empty ones, hold nothing more.
  for (let i = 0; i < 5; i++) k.accept(`i=full:d=0;${chunk}`);
  const held = k.pendingParts;
  for (let i = 0; i < 10_000; i++) k.accept(i % 2 === 0 ? 'i=full:d=0;' : 'i=full:d=0:p=body;x');
  assert.equal(k.pendingParts, held);
  assert.equal(k.accept('i=full;').kind, 'complete');
  for (let i = 0; i < MAX_PENDING_IDS + 3; i++) k.accept(`i=id${i}:d=0;t${i}`);
  assert.equal(k.pendingIds, MAX_PENDING_IDS);
  // The three oldest went: their last chunk starts afresh, with nothing of before.
  assert.deepEqual(k.accept('i=id0:p=body;b'), { kind: 'complete', title: '', body: 'b' });
  assert.deepEqual(k.accept(`i=id${MAX_PENDING_IDS + 2}:p=body;b`), { kind: 'complete', title: `t${MAX_PENDING_IDS + 2}`, body: 'b' });
  now += PENDING_MAX_MS;
  assert.deepEqual(k.accept('i=id5:p=body;late'), { kind: 'complete', title: '', body: 'late' });
  assert.equal(k.pendingIds, 0);
});

test('kitty notifications property: any chunking of a title and body under any id gives them back whole', () => {
  const text = fc.string({ maxLength: 60 }).filter((s) => !s.includes('\u001b'));
  fc.assert(
    fc.property(
      fc.stringMatching(/^[A-Za-z0-9_+.-]{0,12}$/),
      text,
      text,
      fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      (id, title, body, cuts, base64) => {
        const k = new KittyNotifications(() => 0);
        const chunks: string[] = [];
        const split = (s: string, p: string): void => {
          const bytes = Buffer.from(s, 'utf8');
          let at = 0;
          for (const c of cuts) {
            if (at >= bytes.length) break;
            const part = bytes.subarray(at, at + c);
            at += c;
            // Plain chunks must each be text (the filter reads an OSC as UTF-8): cut them only in base64.
            if (base64) chunks.push(`i=${id}:d=0:p=${p}:e=1;${part.toString('base64')}`);
          }
          if (!base64) chunks.push(`i=${id}:d=0:p=${p};${s}`);
          else if (at < bytes.length) chunks.push(`i=${id}:d=0:p=${p}:e=1;${bytes.subarray(at).toString('base64')}`);
        };
        split(title, 'title');
        split(body, 'body');
        for (const c of chunks) assert.deepEqual(k.accept(c), { kind: 'pending' });
        assert.deepEqual(k.accept(`i=${id};`), { kind: 'complete', title, body });
      },
    ),
  );
});

test('OSC 99 metadata property: never throws; any metadata that parses has a bounded id and a known shape', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (meta) => {
      const m = parseOsc99Metadata(meta);
      if (m === null) return;
      assert.ok(m.id.length <= 64);
      assert.ok(!/[;:\s\x00-\x1f]/.test(m.id));
      assert.equal(typeof m.more, 'boolean');
    }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('a', 'c', 'o', 'u', 'w', 't', 's', 'f', 'g', 'n'), fc.stringMatching(/^[A-Za-z0-9,.+-]{0,10}$/)), { maxLength: 10 }),
      fc.constantFrom('title', 'body'),
      (others, p) => {
        const meta = [...others.map(([key, value]) => `${key}=${value}`), 'i=x', `p=${p}`].join(':');
        assert.deepEqual(parseOsc99Metadata(meta), { id: 'x', more: false, payload: p, base64: false });
      },
    ),
  );
});

function filterRun(input: string | string[], opts: { notifyTerminal?: boolean } = {}): { out: string; events: FilterEvent[] } {
  const events: FilterEvent[] = [];
  const f = new TerminalFilter({ now: () => 0, onEvent: (e) => events.push(e) });
  if (opts.notifyTerminal === false) f.notifyTerminal = false;
  let out = '';
  for (const c of Array.isArray(input) ? input : [input]) out += f.push(Buffer.from(c, 'utf8')).toString('utf8');
  return { out, events: events.filter((e) => e.type !== 'dropped') };
}

test('terminal filter: OSC 99 chunks become one notification event, inert, written again without actions; queries pass nothing', () => {
  const seq = '\x1b]99;i=1:d=0;Hello world\x1b\\\x1b]99;i=1:d=1:p=body:a=report:c=1;This\x7f is \u202ecool\x1b\\';
  const r = filterRun(seq);
  assert.deepEqual(r.events, [{ type: 'notification', source: 'osc99', title: 'Hello world', body: 'This\\x7f is \\u202ecool' }]);
  const m = /^\x1b\]99;i=(jackin-[0-9a-f]{8}-1):d=0;Hello world\x1b\\\x1b\]99;i=\1:p=body;This\\x7f is \\u202ecool\x1b\\$/.exec(r.out);
  assert.ok(m, JSON.stringify(r.out));
  // Split anywhere, the same.
  for (let cut = 1; cut < seq.length; cut += 7) {
    const s = filterRun([seq.slice(0, cut), seq.slice(cut)]);
    assert.deepEqual(s.events, r.events, `cut at ${cut}`);
  }
  // Desktop only: the event, nothing on the terminal.
  assert.deepEqual(filterRun(seq, { notifyTerminal: false }).out, '');
  // Queries, alive and close reach neither the terminal (which would answer) nor the notifier.
  assert.deepEqual(filterRun('a\x1b]99;i=q:p=?;\x1b\\b\x1b]99;i=q:p=alive;\x07c\x1b]99;i=1:p=close;\x1b\\d'), { out: 'abcd', events: [] });
  // Pending chunks write nothing; a single text keeps the host's title.
  assert.deepEqual(filterRun('\x1b]99;i=2:d=0;T\x07x'), { out: 'x', events: [] });
  assert.deepEqual(filterRun(`\x1b]99;i=3:e=1;${b64('only ✓')}\x07`), {
    out: '\x1b]99;;only ✓\x1b\\',
    events: [{ type: 'notification', source: 'osc99', title: null, body: 'only ✓' }],
  });
});
