import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPorts, portsJson } from './ports-command.ts';

const LISTED = [
  { hostPort: 1455, containerPort: 1455, kind: 'login' },
  { hostPort: 43117, containerPort: 5173, kind: 'forward' },
] as const;

test('jackin-capsule ports: one host URL per forward, naming the container port it reaches and what made it', () => {
  assert.equal(
    formatPorts(LISTED),
    'http://localhost:1455/ -> container port 1455 (login callback)\nhttp://localhost:43117/ -> container port 5173 (jackin forward)\n',
  );
});

test('jackin-capsule ports --json: an array of {hostPort, containerPort, url, kind}', () => {
  assert.deepEqual(JSON.parse(portsJson(LISTED)), [
    { hostPort: 1455, containerPort: 1455, url: 'http://localhost:1455/', kind: 'login' },
    { hostPort: 43117, containerPort: 5173, url: 'http://localhost:43117/', kind: 'forward' },
  ]);
});

test('jackin-capsule ports: nothing forwarded is said plainly (text), an empty array (JSON)', () => {
  assert.match(formatPorts([]), /^no port of the host leads to this container now .*jackin forward NAME PORT/);
  assert.equal(portsJson([]), '[]\n');
});
