import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { secretReason } from './secret-paths.ts';

test('secret paths: credential locations and key-like names are refused, with a reason', () => {
  for (const p of [
    '/home/me/.ssh/id_ed25519',
    '/home/me/.ssh/config',
    '/root/.ssh/authorized_keys',
    '/home/me/.gnupg/private-keys-v1.d/x.key',
    '/home/me/.aws/credentials',
    '/home/me/.kube/config',
    '/home/me/.config/gcloud/application_default_credentials.json',
    '/home/me/.docker/config.json',
    '/home/me/.netrc',
    '/Users/me/Library/Keychains/login.keychain-db',
    '/home/me/.local/share/keyrings/login.keyring',
    '/srv/app/.env',
    '/srv/app/.env.production',
    '/tmp/id_rsa',
    '/tmp/server.pem',
    '/tmp/tls.key',
    '/etc/shadow',
  ]) {
    assert.notEqual(secretReason(p), null, p);
  }
});

test('secret paths: ordinary files, including look-alikes, may be staged', () => {
  for (const p of [
    '/home/me/report.pdf',
    '/home/me/.env.example',
    '/tmp/id_rsa.pub',
    '/home/me/ssh/notes.txt',
    '/home/me/.docker/daemon.json',
    '/home/me/my.environment.txt',
    '/tmp/keys.csv',
  ]) {
    assert.equal(secretReason(p), null, p);
  }
});

test('secret paths property: anything below a .ssh, .gnupg or .aws directory, at any depth, is refused', () => {
  const seg = fc.stringMatching(/^[A-Za-z0-9 _-]{1,12}$/);
  fc.assert(
    fc.property(
      fc.array(seg, { maxLength: 3 }),
      fc.constantFrom('.ssh', '.gnupg', '.aws', '.kube'),
      fc.array(seg, { minLength: 1, maxLength: 3 }),
      (pre, dir, post) => {
        assert.notEqual(secretReason(`/${[...pre, dir, ...post].join('/')}`), null);
      },
    ),
  );
});
