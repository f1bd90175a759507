import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionLogPath, appendAction, formatActions, readActions } from './action-log.ts';
import { JACKIN_BIN } from '../../../test/helpers/jackin-cli.ts';
import { testDir } from '../../../test/helpers/test-run.ts';

const HOSTILE = 'x\x1b]52;c;eA==\x07\u009b2J\x1b[31m';

function home(t: { after: (f: () => void) => void }): string {
  return testDir(t, 'jackin-log-');
}

test('appendAction writes one JSON line per record to a 0600 file in a 0700 directory, appending only', async (t) => {
  const h = home(t);
  assert.equal(await appendAction(h, { instance: 'a', action: 'open-url', target: 'https://example.com/', result: 'ok' }), true);
  assert.equal(await appendAction(h, { instance: 'b', action: 'export', target: 'r.txt', result: 'refused', detail: 'E_POLICY_DENIED: no' }), true);
  assert.equal(statSync(actionLogPath(h)).mode & 0o777, 0o600);
  assert.equal(statSync(join(h, 'log')).mode & 0o777, 0o700);
  const lines = readFileSync(actionLogPath(h), 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.deepEqual(
    (await readActions(h, 'b')).map((r) => [r.action, r.result, r.detail]),
    [['export', 'refused', 'E_POLICY_DENIED: no']],
  );
  // Concurrent appends never interleave.
  await Promise.all(Array.from({ length: 50 }, (_, i) => appendAction(h, { instance: 'c', action: 'export', target: `f${i}`.repeat(50), result: 'ok' })));
  assert.equal((await readActions(h, 'c')).length, 50);
});

test('a symlink planted where the log goes is refused, not followed', async (t) => {
  const h = home(t);
  mkdirSync(join(h, 'log'), { mode: 0o700 });
  const victim = join(h, 'victim');
  writeFileSync(victim, 'keep');
  symlinkSync(victim, actionLogPath(h));
  assert.equal(await appendAction(h, { instance: 'a', action: 'open-url', target: 'x', result: 'ok' }), false);
  assert.equal(readFileSync(victim, 'utf8'), 'keep');
});

test('jackin log shows time, instance, action, result and target inert; --json round-trips them', async (t) => {
  const h = home(t);
  await appendAction(h, { instance: 'agent', action: 'open-url', target: `https://example.com/${HOSTILE}`, result: 'ok', time: '2026-12-01T10:00:00.000Z' });
  await appendAction(h, { instance: 'other', action: 'export', target: HOSTILE, result: 'failed', detail: HOSTILE });
  writeFileSync(actionLogPath(h), 'not json\n', { flag: 'a' });
  const run = (args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [JACKIN_BIN, 'log', ...args], { env: { ...process.env, JACKIN_HOME: h } }, (e, out) => (e ? reject(e) : resolve(out))),
    );
  const all = await run([]);
  assert.equal(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u.test(all), false, all);
  assert.match(all, /^TIME +INSTANCE +ACTION +RESULT +TARGET +DETAIL$/mu);
  assert.match(all, /^2026-12-01T10:00:00.000Z +agent +open-url +ok +https:\/\/example\.com\/x\\x1b\]52/mu);
  const one = await run(['other']);
  assert.doesNotMatch(one, /agent/u);
  const json = await run(['--json', '--tail', '1']);
  assert.equal(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u.test(json), false);
  assert.equal(JSON.parse(json).detail, HOSTILE);
  assert.equal(formatActions([]), 'no host actions recorded\n');
});
