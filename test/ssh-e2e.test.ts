// End-to-end: jackin over a real OpenSSH server on loopback (issue 47): test/helpers/sshd.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { SSH_TEST_HOST, startSshd } from './helpers/sshd.ts';

test('the test sshd takes `ssh -F CFG testhost` with its own keys and gives the session its JACKIN_HOME', async (t) => {
  const sshd = await startSshd(t);
  const out = execFileSync('ssh', ['-F', sshd.clientConfig, SSH_TEST_HOST, 'echo "$JACKIN_HOME"; uname -s'], { encoding: 'utf8' });
  assert.equal(out, `${sshd.remoteJackinHome}\nLinux\n`);
  // A dropped server: a new one on the same port with the same keys is trusted as before.
  await sshd.kill();
  await sshd.restart();
  assert.equal(execFileSync('ssh', ['-F', sshd.clientConfig, SSH_TEST_HOST, 'echo again'], { encoding: 'utf8' }), 'again\n');
});
