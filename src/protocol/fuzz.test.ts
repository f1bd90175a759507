// A short run of the decoder fuzzer in every test run; `npm run fuzz` runs a million frames per direction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzDirection } from '../../test/helpers/frame-fuzz.ts';

const root = new URL('../../', import.meta.url);

for (const direction of ['client', 'server'] as const) {
  test(`fuzz: ${direction} decoder survives 20,000 mutated frames with only protocol errors`, () => {
    const s = fuzzDirection(direction, 20_000, 0x5eed + (direction === 'client' ? 1 : 2), root);
    assert.ok(s.frames >= 20_000);
    // The mutations must actually reach both kinds of error and still decode good frames.
    assert.ok(s.payloadErrors > 100, `payload errors: ${s.payloadErrors}`);
    assert.ok(s.framingErrors > 100, `framing errors: ${s.framingErrors}`);
    assert.ok(s.items - s.payloadErrors > 1000, `frames decoded: ${s.items - s.payloadErrors}`);
  });
}
