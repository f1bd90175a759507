import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keysHintEnabled, keysHintText } from './keys-hint.ts';
import { parseKeySpec } from '../terminal/trigger-keys.ts';

test('the keys hint names the palette key (default Ctrl+\\), none without one, and JACKIN_HINT turns it off', () => {
  assert.equal(keysHintText(undefined), 'jackin: Ctrl+\\ opens the palette, Ctrl+\\ d detaches');
  assert.equal(keysHintText(parseKeySpec('ctrl+]', 'JACKIN_PALETTE_KEY')), 'jackin: Ctrl+] opens the palette, Ctrl+] d detaches');
  assert.equal(keysHintText(null), null);
  assert.equal(keysHintEnabled({}), true);
  assert.equal(keysHintEnabled({ JACKIN_HINT: 'off' }), false);
});
