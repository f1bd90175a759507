import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { PlainInput, plainEndOfInput } from './plain-input.ts';

test('the end of input is one VEOF at the start of a line (or of nothing), two after a partial line', () => {
  assert.deepEqual([...plainEndOfInput(undefined)], [4]);
  assert.deepEqual([...plainEndOfInput(0x0a)], [4]);
  assert.deepEqual([...plainEndOfInput(0x79)], [4, 4]);
});

test('PlainInput reads nothing before start, then passes stdin on unchanged and ends it with VEOF', async () => {
  const stdin = new PassThrough();
  const sent: Buffer[] = [];
  const input = new PlainInput({ stdin, send: (b) => (sent.push(b), true), drained: () => Promise.resolve() });
  stdin.write(Buffer.from('a\x1c\x03'));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, 0, 'nothing before the capsule welcomed the host');
  input.start();
  stdin.end(Buffer.from('b'));
  await new Promise((r) => stdin.once('end', r));
  assert.deepEqual(Buffer.concat(sent).toString('latin1'), 'a\x1c\x03b\x04\x04');
  input.dispose();
});

test('PlainInput stops reading stdin while the transport is full and reads on once it drained', async () => {
  const stdin = new PassThrough();
  let full = true;
  let drain!: () => void;
  const sent: string[] = [];
  const input = new PlainInput({
    stdin,
    send: (b) => (sent.push(b.toString('latin1')), !full),
    drained: () => new Promise<void>((r) => (drain = r)),
  });
  input.start();
  stdin.write('one\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(stdin.isPaused(), true);
  full = false;
  drain();
  await new Promise((r) => setImmediate(r));
  assert.equal(stdin.isPaused(), false);
  stdin.end('two\n');
  await new Promise((r) => stdin.once('end', r));
  assert.deepEqual(sent, ['one\n', 'two\n', '\x04']);
  input.dispose();
});
