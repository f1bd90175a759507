import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createHostServices } from './host-services.ts';

test('host services: each service is built at its first use, once, and shared', () => {
  const written: Buffer[] = [];
  const s = createHostServices({ env: { PATH: '', JACKIN_OPENER: 'true', JACKIN_CLIPBOARD: 'none' }, writeTerminal: (b) => void written.push(b) });
  assert.equal(s.opener, s.opener);
  assert.equal(s.textWriter, s.textWriter);
  assert.equal(s.clipboardReader, s.clipboardReader);
  assert.equal(s.notifier, s.notifier);
  assert.equal(s.env['JACKIN_OPENER'], 'true', 'the switches are the environment given');
});

test('host services: nothing is chosen before its first use (a bad switch fails only when its service is asked for)', () => {
  const s = createHostServices({ env: { JACKIN_CLIPBOARD: 'nonsense', JACKIN_NOTIFIER: 'command:' }, writeTerminal: () => undefined });
  assert.equal(typeof s.opener.openUrl, 'function');
  assert.throws(
    () => s.clipboardReader,
    (e: unknown) => (e as { code?: string }).code === 'E_BAD_CLIPBOARD_BACKEND',
  );
});

test('host services: a notifier the switches misconfigure fails each time it is asked, with the same error', () => {
  const s = createHostServices({ env: { JACKIN_NOTIFIER: 'command:' } });
  let first: unknown;
  assert.throws(
    () => s.notifier,
    (e: unknown) => ((first = e), (e as { code?: string }).code === 'E_NOTIFIER_CONFIG'),
  );
  assert.throws(
    () => s.notifier,
    (e: unknown) => e === first,
  );
});

test('host services: the text writer needs the terminal; the export directory follows JACKIN_DOWNLOAD_DIR', async () => {
  const s = createHostServices({ env: { JACKIN_DOWNLOAD_DIR: '/tmp/jackin-downloads' } });
  assert.throws(() => s.textWriter, TypeError);
  assert.equal(await s.exportDirectory('box'), join('/tmp/jackin-downloads', 'jackin', 'box'));
});
