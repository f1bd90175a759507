import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { exportDirectory, parseXdgDownloadDir, pickDownloadsDir } from './download-dir.ts';

const USER_DIRS = '# comment\nXDG_DESKTOP_DIR="$HOME/Desktop"\nXDG_DOWNLOAD_DIR="$HOME/Téléchargements"\n';

test('parseXdgDownloadDir expands $HOME and ignores disabled or relative values', () => {
  assert.equal(parseXdgDownloadDir(USER_DIRS, '/home/u'), '/home/u/Téléchargements');
  assert.equal(parseXdgDownloadDir('XDG_DOWNLOAD_DIR="/data/dl"', '/home/u'), '/data/dl');
  assert.equal(parseXdgDownloadDir('XDG_DOWNLOAD_DIR="$HOME/"', '/home/u'), undefined);
  assert.equal(parseXdgDownloadDir('XDG_DOWNLOAD_DIR="dl"', '/home/u'), undefined);
  assert.equal(parseXdgDownloadDir('', '/home/u'), undefined);
});

test('pickDownloadsDir: JACKIN_DOWNLOAD_DIR, then XDG on Linux, then ~/Downloads', () => {
  const base = { home: '/home/u', userDirs: USER_DIRS };
  assert.equal(pickDownloadsDir({ ...base, env: { JACKIN_DOWNLOAD_DIR: '/x' }, platform: 'linux' }), '/x');
  assert.equal(pickDownloadsDir({ ...base, env: {}, platform: 'linux' }), '/home/u/Téléchargements');
  assert.equal(pickDownloadsDir({ ...base, env: {}, platform: 'darwin' }), '/home/u/Downloads');
  assert.equal(pickDownloadsDir({ home: '/home/u', userDirs: undefined, env: { JACKIN_DOWNLOAD_DIR: '' }, platform: 'linux' }), '/home/u/Downloads');
});

test('exportDirectory reads user-dirs.dirs and appends jackin/<sanitised instance>; --to wins', async () => {
  const home = mkdtempSync(join(tmpdir(), 'jk-home-'));
  try {
    mkdirSync(join(home, '.config'));
    writeFileSync(join(home, '.config', 'user-dirs.dirs'), 'XDG_DOWNLOAD_DIR="$HOME/dl"\n');
    const env = { HOME: home };
    assert.equal(await exportDirectory('box', undefined, env), join(home, 'dl', 'jackin', 'box'));
    assert.equal(await exportDirectory('../evil', undefined, env), join(home, 'dl', 'jackin', 'evil'));
    assert.equal(await exportDirectory('box', undefined, { ...env, JACKIN_DOWNLOAD_DIR: '/srv/d' }), '/srv/d/jackin/box');
    assert.equal(await exportDirectory('box', '/elsewhere', env), '/elsewhere');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
