import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { JackinError } from '../../errors.ts';
import { parseSshTarget, remoteQuote, remoteScript, sshArgv, sshCommand } from './ssh.ts';

test('parseSshTarget reads [user@]host[:port], bracketed IPv6 and a bare IPv6 address', () => {
  assert.deepEqual(parseSshTarget('box'), { destination: 'box' });
  assert.deepEqual(parseSshTarget('dev@box:2222'), { destination: 'dev@box', port: 2222 });
  assert.deepEqual(parseSshTarget('[::1]:22'), { destination: '::1', port: 22 });
  assert.deepEqual(parseSshTarget('root@[fe80::1]'), { destination: 'root@fe80::1' });
  assert.deepEqual(parseSshTarget('::1'), { destination: '::1' });
});

test('parseSshTarget refuses what ssh would misread: an option, blanks, an empty host or user, a bad port', () => {
  for (const bad of ['', '-oProxyCommand=x', 'a b', 'box\n', '@box', 'dev@', 'box:0', 'box:70000', 'box:http']) {
    assert.throws(
      () => parseSshTarget(bad),
      (e: unknown) => e instanceof JackinError && e.code === 'E_SSH_CONFIG',
      JSON.stringify(bad),
    );
  }
});

test('JACKIN_SSH_COMMAND replaces ssh and its options, split as a shell would; unset or blank is ssh', () => {
  assert.deepEqual(sshCommand({}), ['ssh']);
  assert.deepEqual(sshCommand({ JACKIN_SSH_COMMAND: '  ' }), ['ssh']);
  assert.deepEqual(sshCommand({ JACKIN_SSH_COMMAND: `ssh -F '/a b/cfg' -o "User=x y"` }), ['ssh', '-F', '/a b/cfg', '-o', 'User=x y']);
  assert.throws(
    () => sshCommand({ JACKIN_SSH_COMMAND: "ssh -F 'x" }),
    (e: unknown) => e instanceof JackinError && e.code === 'E_SSH_CONFIG',
  );
});

test("sshArgv: the operator's words first (their -o wins), then connection sharing, the port and the destination after --", () => {
  const argv = sshArgv(['ssh', '-o', 'ControlMaster=no'], { destination: 'dev@box', port: 2222 }, '/c', 'true');
  assert.deepEqual(argv, [
    'ssh',
    '-o',
    'ControlMaster=no',
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=/c/${argv[6]!.slice('ControlPath=/c/'.length)}`,
    '-o',
    'ControlPersist=10',
    '-p',
    '2222',
    '-T',
    '--',
    'dev@box',
    'true',
  ]);
  assert.match(argv[6]!, /^ControlPath=\/c\/[0-9a-f]{20}$/);
  assert.notEqual(sshArgv(['ssh'], { destination: 'dev@box', port: 2222 }, '/c', 'true')[6], argv[6], 'other ssh words: another connection');
});

test("remoteQuote and remoteScript: the remote's shell reads every word back as it was", () => {
  const words = ["it's", 'a b', '$HOME', '`id`', '"q"', '\\', '', '*', 'line\nbreak'];
  // What ssh does with its remote command: the login shell reads the line again.
  const line = remoteScript('for w in "$@"; do printf "[%s]" "$w"; done', words);
  assert.equal(execFileSync('sh', ['-c', line], { encoding: 'utf8' }), words.map((w) => `[${w}]`).join(''));
  assert.equal(remoteQuote("a'b"), `'a'\\''b'`);
});
