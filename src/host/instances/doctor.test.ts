import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startXvfb } from '../../../test/helpers/xvfb.ts';
import { runDoctor, type Check } from './doctor.ts';

function base(t: { after: (fn: () => void) => void }): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'jackin-doctor-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  return { PATH: process.env['PATH'], HOME: home, JACKIN_HOME: join(home, '.jackin'), JACKIN_DOWNLOAD_DIR: join(home, 'dl') };
}
const byName = (checks: Check[], name: string): Check => {
  const c = checks.find((x) => x.name === name);
  assert.ok(c, `check ${name} present in ${JSON.stringify(checks)}`);
  return c;
};

test('doctor: with a real X11 clipboard the xclip backend is found working', async (t) => {
  const x = await startXvfb();
  t.after(() => x.stop());
  const env = { ...base(t), DISPLAY: x.display };
  const c = byName(await runDoctor(env), 'clipboard');
  assert.equal(c.status, 'ok', JSON.stringify(c));
  assert.match(c.detail, /^xclip .* works/);
});

test('doctor: a missing clipboard tool is an error whose fix is the install command', async (t) => {
  const env = { ...base(t), DISPLAY: ':99', JACKIN_CLIPBOARD: 'xclip', PATH: '/nonexistent' };
  const c = byName(await runDoctor(env), 'clipboard');
  assert.equal(c.status, 'error');
  assert.match(c.fix ?? '', /apt-get install xclip/);
});

test('doctor: opener, keys and downloads report their configuration and fixes', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none', JACKIN_OPENER: '/nonexistent/opener --flag', JACKIN_PALETTE_KEY: 'ctrl+v' };
  const checks = await runDoctor(env);
  assert.equal(byName(checks, 'clipboard').status, 'warning');
  const opener = byName(checks, 'opener');
  assert.equal(opener.status, 'error');
  assert.match(opener.fix ?? '', /JACKIN_OPENER/);
  const keys = byName(checks, 'keys');
  assert.equal(keys.status, 'error', 'palette and paste keys may not be the same');
  const dl = byName(checks, 'downloads');
  assert.equal(dl.status, 'ok');
  assert.match(dl.detail, new RegExp(`${env['JACKIN_DOWNLOAD_DIR']}/jackin/<instance>/`));
  const off = byName(await runDoctor({ ...env, JACKIN_OPEN_LINKS: 'OFF' }), 'opener');
  assert.equal(off.status, 'warning');
});

test('doctor: a stale instance is reported with how to reach it and what to remove', async (t) => {
  const env: NodeJS.ProcessEnv = { ...base(t), JACKIN_CLIPBOARD: 'none' };
  const dir = join(env['JACKIN_HOME']!, 'sockets', 'gone');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capsule.json'), JSON.stringify({ pid: 1, name: 'gone', program: ['bash'], workspace: '/', startedAt: '' }));
  writeFileSync(join(dir, 'jackin.sock'), '');
  const c = byName(await runDoctor(env), 'instance:gone');
  assert.equal(c.status, 'warning');
  assert.match(c.detail, /--via docker/);
  assert.match(c.fix ?? '', new RegExp(dir));
});
