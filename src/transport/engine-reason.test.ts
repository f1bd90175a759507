import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineReason } from './engine-reason.ts';

test("engineReason: docker's reason, not the usage line after it", () => {
  const missing = [
    "Unable to find image 'localhost/nope:1' locally",
    'docker: Error response from daemon: Get "https://localhost/v2/": dial tcp 127.0.0.1:443: connect: connection refused',
    '',
    "Run 'docker run --help' for more information",
    '',
  ].join('\n');
  assert.equal(
    engineReason(missing),
    'Unable to find image \'localhost/nope:1\' locally | docker: Error response from daemon: Get "https://localhost/v2/": dial tcp 127.0.0.1:443: connect: connection refused',
  );
  assert.equal(
    engineReason("docker: invalid reference format: repository name (library/UPPER) must be lowercase.\nSee 'docker run --help'.\n"),
    'docker: invalid reference format: repository name (library/UPPER) must be lowercase.',
  );
  assert.equal(engineReason('Error: no such container x\n'), 'Error: no such container x');
  assert.equal(engineReason("\n  \nRun 'docker run --help' for more information\n"), null);
  assert.equal(engineReason(''), null);
});

test('engineReason: the last three lines at most, control characters made visible, bounded length', () => {
  assert.equal(engineReason('a\nb\nc\nd\n'), 'b | c | d');
  const hostile = engineReason('Error: \x1b]52;c;aGk=\x07 \u202eevil\r\n');
  assert.equal(hostile, 'Error: \\x1b]52;c;aGk=\\x07 \\u202eevil');
  assert.ok([...(engineReason('x'.repeat(5000)) ?? '')].length <= 400);
  assert.ok([...(engineReason('y'.repeat(100), 20) ?? '')].length <= 20);
});

test("engineReason: podman's Error line, without the retry warnings before it", () => {
  const said = [
    'Trying to pull localhost/nope:1...',
    'time="2026-12-06T04:37:06Z" level=warning msg="Failed, retrying in 1s ... (1/3). Error: initializing source"',
    'time="2026-12-06T04:37:07Z" level=warning msg="Failed, retrying in 1s ... (2/3). Error: initializing source"',
    'Error: initializing source docker://localhost/nope:1: pinging container registry localhost: connection refused',
  ].join('\n');
  assert.equal(
    engineReason(said),
    'Trying to pull localhost/nope:1... | Error: initializing source docker://localhost/nope:1: pinging container registry localhost: connection refused',
  );
});
