import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../errors.ts';
import {
  containerRunArgv,
  DEFAULT_IMAGE_PATH,
  explainStartFailure,
  imagePathFromEnv,
  terminalIdentityEnv,
  type ContainerRunSpec,
} from './container-run-argv.ts';
import { DEBIAN_LIBRARIES, REFERENCE_CAPSULE } from '../../../test/helpers/reference-operator.ts';

const base: ContainerRunSpec = {
  engine: 'docker',
  name: 'agent',
  image: 'node:24-bookworm',
  runDir: '/home/op/.jackin/sockets/agent',
  workspace: '/home/op/src',
  program: ['claude', '--continue'],
  user: '1000:1000',
  term: 'xterm-256color',
  rows: 40,
  cols: 132,
  capsule: { kind: 'host', node: '/usr/bin/node', packageRoot: '/usr/lib/node_modules/jackin-bridge', imagePath: '/usr/local/bin:/usr/bin:/bin' },
};

/** The reference capsule with the host's libraries lent (host-libraries.ts). */
const lent = {
  kind: 'host',
  node: '/usr/bin/node',
  packageRoot: '/usr/lib/node_modules/jackin-bridge',
  imagePath: '/usr/local/bin:/usr/bin:/bin',
  libraries: DEBIAN_LIBRARIES,
} as const;

test('containerRunArgv: the host lends its Node and package read-only; run dir, workspace, --init, user, TERM, size', () => {
  assert.deepEqual(containerRunArgv(base), [
    'docker',
    'run',
    '-d',
    '--init',
    '--name',
    'agent',
    '--label',
    'io.github.jackin-bridge.instance=agent',
    '-v',
    '/home/op/.jackin/sockets/agent:/jackin/run',
    '-v',
    '/home/op/src:/workspace',
    '-w',
    '/workspace',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'JACKIN_RUN_DIR=/jackin/run',
    '--user',
    '1000:1000',
    '-v',
    '/usr/bin/node:/opt/jackin/node:ro',
    '-v',
    '/usr/lib/node_modules/jackin-bridge:/opt/jackin/pkg:ro',
    '-e',
    'PATH=/opt/jackin/pkg/container-bin:/opt/jackin/pkg/container-bin/clipboard:/opt/jackin/pkg/container-bin/browser:/usr/local/bin:/usr/bin:/bin',
    '-e',
    'BROWSER=/opt/jackin/pkg/container-bin/browser/jackin-browser',
    '--entrypoint',
    '/opt/jackin/node',
    'node:24-bookworm',
    '--max-semi-space-size=2',
    '--no-concurrent-recompilation',
    '/opt/jackin/pkg/bin/jackin-capsule.js',
    'serve',
    '--name',
    'agent',
    '--run-dir',
    '/jackin/run',
    '--workspace',
    '/workspace',
    '--rows',
    '40',
    '--cols',
    '132',
    '--',
    'claude',
    '--continue',
  ]);
});

test("containerRunArgv: the image's own jackin-capsule (a macOS or Windows host), the image's user", () => {
  const { rows: _r, cols: _c, ...noSize } = base;
  assert.deepEqual(containerRunArgv({ ...noSize, engine: 'podman', user: null, capsule: { kind: 'image' } }), [
    'podman',
    'run',
    '-d',
    '--init',
    '--name',
    'agent',
    '--label',
    'io.github.jackin-bridge.instance=agent',
    '-v',
    '/home/op/.jackin/sockets/agent:/jackin/run',
    '-v',
    '/home/op/src:/workspace',
    '-w',
    '/workspace',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'JACKIN_RUN_DIR=/jackin/run',
    '--entrypoint',
    'jackin-capsule',
    'node:24-bookworm',
    'serve',
    '--name',
    'agent',
    '--run-dir',
    '/jackin/run',
    '--workspace',
    '/workspace',
    '--browser',
    '--clipboard',
    '--',
    'claude',
    '--continue',
  ]);
});

test('containerRunArgv: variables by name only, mounts, network, and engine arguments just before the image', () => {
  const argv = containerRunArgv({
    ...base,
    envNames: ['ANTHROPIC_API_KEY', 'HOME'],
    volumes: [
      { host: '/home/op/.claude-home', container: '/home/agent', mode: null },
      { host: '/opt/agents', container: '/opt/agents', mode: 'ro' },
      { host: '/srv/cache', container: '/cache', mode: 'rw' },
    ],
    network: 'none',
    engineArgs: ['--cap-add=SYS_PTRACE', '--shm-size', '1g'],
  });
  assert.deepEqual(argv, [
    'docker',
    'run',
    '-d',
    '--init',
    '--name',
    'agent',
    '--label',
    'io.github.jackin-bridge.instance=agent',
    '-v',
    '/home/op/.jackin/sockets/agent:/jackin/run',
    '-v',
    '/home/op/src:/workspace',
    '-w',
    '/workspace',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'JACKIN_RUN_DIR=/jackin/run',
    '--user',
    '1000:1000',
    '-e',
    'ANTHROPIC_API_KEY',
    '-e',
    'HOME',
    '-v',
    '/home/op/.claude-home:/home/agent',
    '-v',
    '/opt/agents:/opt/agents:ro',
    '-v',
    '/srv/cache:/cache:rw',
    '--network',
    'none',
    '-v',
    '/usr/bin/node:/opt/jackin/node:ro',
    '-v',
    '/usr/lib/node_modules/jackin-bridge:/opt/jackin/pkg:ro',
    '-e',
    'PATH=/opt/jackin/pkg/container-bin:/opt/jackin/pkg/container-bin/clipboard:/opt/jackin/pkg/container-bin/browser:/usr/local/bin:/usr/bin:/bin',
    '-e',
    'BROWSER=/opt/jackin/pkg/container-bin/browser/jackin-browser',
    '--cap-add=SYS_PTRACE',
    '--shm-size',
    '1g',
    '--entrypoint',
    '/opt/jackin/node',
    'node:24-bookworm',
    '--max-semi-space-size=2',
    '--no-concurrent-recompilation',
    '/opt/jackin/pkg/bin/jackin-capsule.js',
    'serve',
    '--name',
    'agent',
    '--run-dir',
    '/jackin/run',
    '--workspace',
    '/workspace',
    '--rows',
    '40',
    '--cols',
    '132',
    '--',
    'claude',
    '--continue',
  ]);
  const { rows: _r, cols: _c, ...noSize } = base;
  const image = containerRunArgv({ ...noSize, capsule: { kind: 'image' }, envNames: ['K'], engineArgs: ['--privileged'] });
  assert.deepEqual(image.slice(image.indexOf('-e', image.indexOf('--user'))), [
    '-e',
    'K',
    '--privileged',
    '--entrypoint',
    'jackin-capsule',
    'node:24-bookworm',
    'serve',
    '--name',
    'agent',
    '--run-dir',
    '/jackin/run',
    '--workspace',
    '/workspace',
    '--browser',
    '--clipboard',
    '--',
    'claude',
    '--continue',
  ]);
  assert.throws(
    () => containerRunArgv({ ...base, network: '--privileged' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(
    () => containerRunArgv({ ...base, volumes: [{ host: '/a:b', container: '/c', mode: null }] }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(() => containerRunArgv({ ...base, envNames: ['A=value'] }), TypeError, 'a value never reaches the argv');
});

test("containerRunArgv: jackin's private env file after the names; a TERM the operator passes replaces jackin's", () => {
  const argv = containerRunArgv({ ...base, envNames: ['COLORTERM'], envFile: { path: '/tmp/jackin-env-Ab12Cd/env', names: ['ANTHROPIC_API_KEY', 'HOME'] } });
  assert.deepEqual(argv.slice(argv.indexOf('-w'), argv.indexOf('-v', argv.indexOf('--user'))), [
    '-w',
    '/workspace',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'JACKIN_RUN_DIR=/jackin/run',
    '--user',
    '1000:1000',
    '-e',
    'COLORTERM',
    '--env-file',
    '/tmp/jackin-env-Ab12Cd/env',
  ]);
  for (const spec of [{ envNames: ['TERM'] }, { envFile: { path: '/tmp/e', names: ['TERM'] } }]) {
    const a = containerRunArgv({ ...base, ...spec });
    assert.ok(!a.some((x) => x.startsWith('TERM=')), a.join(' '));
  }
  assert.throws(() => containerRunArgv({ ...base, envFile: { path: '/tmp/e', names: ['A=value'] } }), TypeError);
});

test('containerRunArgv: a path with ":" cannot be bind-mounted, an image or user starting with "-" is not an option', () => {
  assert.throws(
    () => containerRunArgv({ ...base, workspace: '/home/op/a:b' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(
    () => containerRunArgv({ ...base, image: '--privileged' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
  assert.throws(
    () => containerRunArgv({ ...base, user: '--privileged' }),
    (e) => hasCode(e, 'E_USAGE'),
  );
});

test("imagePathFromEnv: the image's PATH, or the engines' default", () => {
  assert.equal(imagePathFromEnv('["HOME=/root","PATH=/opt/x/bin:/usr/bin"]\n'), '/opt/x/bin:/usr/bin');
  assert.equal(imagePathFromEnv('null'), DEFAULT_IMAGE_PATH);
  assert.equal(imagePathFromEnv('not json'), DEFAULT_IMAGE_PATH);
});

test('explainStartFailure: an entrypoint that cannot exec names the fix for each capsule source', () => {
  const logs = 'ERROR (catatonit:2): failed to exec pid1: No such file or directory';
  assert.ok(hasCode(explainStartFailure(logs, base.capsule, 'alpine'), 'E_IMAGE_NOT_GLIBC'));
  assert.ok(hasCode(explainStartFailure(logs, { kind: 'image' }, 'alpine'), 'E_IMAGE_NO_CAPSULE'));
  assert.equal(explainStartFailure('jackin-capsule: E_POLICY: bad key', base.capsule, 'x'), null);
  // With the host's loader and libraries lent, the image's C library plays no part: the logs are shown as they are.
  assert.equal(explainStartFailure(logs, { ...lent }, 'alpine'), null);
});

test('docs/guide.md: the hand-written docker run is exactly what --dry-run prints for it', async () => {
  const { readFileSync } = await import('node:fs');
  const { formatArgv } = await import('../../transport/exec-args.ts');
  const guide = readFileSync(new URL('../../../docs/guide.md', import.meta.url), 'utf8');
  const block = /<!-- generated: jackin run --image --dry-run[^\n]*\n```sh\n([\s\S]*?)```/.exec(guide)?.[1];
  assert.ok(block !== undefined, 'the generated block is in the guide');
  const lines = block
    .replace(/ \\\n\s*/g, ' ')
    .trim()
    .split('\n');
  const { rows: _r, cols: _c, ...spec } = base;
  const argv = containerRunArgv({
    ...spec,
    image: 'my-agent',
    workspace: '/home/op/project',
    program: ['claude'],
    capsule: REFERENCE_CAPSULE,
  });
  assert.deepEqual(lines, [`mkdir -p -m 700 ${spec.runDir}`, formatArgv(argv), 'jackin attach agent']);
});

/** The settings of a `docker run` argv from containerRunArgv, by kind. */
function runSettings(argv: readonly string[]) {
  const s = { init: false, user: '', workdir: '', env: {} as Record<string, string>, volumes: [] as string[], entrypoint: [] as string[], image: '' };
  let i = 2; // after `docker run`
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-d') continue;
    if (a === '--init') s.init = true;
    else if (a === '--name' || a === '--label') i++;
    else if (a === '-v') s.volumes.push(argv[++i]!);
    else if (a === '-w') s.workdir = argv[++i]!;
    else if (a === '--user') s.user = argv[++i]!;
    else if (a === '-e') {
      const [k, ...v] = argv[++i]!.split('=');
      s.env[k!] = v.join('=');
    } else if (a === '--entrypoint') s.entrypoint.push(argv[++i]!);
    else break;
  }
  s.image = argv[i]!;
  s.entrypoint.push(...argv.slice(i + 1));
  return s;
}

test('docs/guide.md: the compose service and the dev container carry exactly the settings of the --dry-run command', async () => {
  const { readFileSync } = await import('node:fs');
  const { formatArgv } = await import('../../transport/exec-args.ts');
  const guide = readFileSync(new URL('../../../docs/guide.md', import.meta.url), 'utf8');
  const { rows: _r, cols: _c, ...spec } = base;
  const run = runSettings(
    containerRunArgv({
      ...spec,
      image: 'my-agent',
      workspace: '/home/op/project',
      program: ['claude'],
      capsule: REFERENCE_CAPSULE,
    }),
  );
  const split = run.entrypoint.indexOf('--');
  const [entrypoint, program] = [run.entrypoint.slice(0, split + 1), run.entrypoint.slice(split + 1)];

  // Compose: the same keys, host paths written relative to the compose file and the home directory.
  const yaml = /### Compose[\s\S]*?```yaml\n([\s\S]*?)```/.exec(guide)?.[1];
  assert.ok(yaml !== undefined, 'the compose block is in the guide');
  const flat = yaml.replace(/,\n\s*/g, ', ');
  assert.match(flat, new RegExp(`^    image: ${run.image}$`, 'm'));
  assert.match(flat, /^ {4}init: true$/m);
  assert.match(flat, new RegExp(`^    user: "${run.user}"$`, 'm'));
  assert.match(flat, new RegExp(`^    working_dir: ${run.workdir}$`, 'm'));
  const env = [...flat.matchAll(/^ {6}([A-Z_]+): (.*)$/gm)].map((m) => [m[1], m[2]]);
  assert.deepEqual(Object.fromEntries(env), run.env);
  const volumes = [...flat.matchAll(/^ {6}- (.*)$/gm)].map((m) => m[1]);
  const local = (v: string) =>
    v.replace(`${spec.runDir}:`, '~/.jackin/sockets/agent:').replace('/home/op/project:', '.:').replace('/home/op/.jackin/', '~/.jackin/');
  assert.deepEqual(volumes, run.volumes.map(local));
  assert.deepEqual(JSON.parse(/^ {4}entrypoint: (.*)$/m.exec(flat)![1]!), entrypoint);
  assert.deepEqual(JSON.parse(/^ {4}command: (.*)$/m.exec(flat)![1]!), program);

  // Dev container: the same settings as JSON; the capsule starts in the background once the container runs.
  const json = /### Dev containers[\s\S]*?```json\n([\s\S]*?)```/.exec(guide)?.[1];
  assert.ok(json !== undefined, 'the devcontainer.json block is in the guide');
  const dc = JSON.parse(json) as Record<string, unknown>;
  assert.equal(dc.image, run.image);
  assert.equal(dc.init, true);
  assert.equal(dc.containerUser, run.user);
  assert.deepEqual(dc.containerEnv, run.env);
  assert.equal(dc.workspaceFolder, run.workdir);
  const mount = (v: string) => {
    const [source, target, ro] = v.split(':');
    return `type=bind,source=${source},target=${target}${ro === 'ro' ? ',readonly' : ''}`;
  };
  const [runDirVolume, workspaceVolume, ...lent] = run.volumes;
  assert.deepEqual(dc.mounts, [
    mount(runDirVolume!).replace(spec.runDir, '${localEnv:HOME}/.jackin/sockets/agent'),
    ...lent.map((v) => mount(v).replace('/home/op/', '${localEnv:HOME}/')),
  ]);
  assert.equal(dc.workspaceMount, mount(workspaceVolume!).replace('/home/op/project', '${localWorkspaceFolder}'));
  assert.equal(dc.postStartCommand, `nohup ${formatArgv([...entrypoint, ...program])} >/dev/null 2>&1 &`);
});

test("terminalIdentityEnv: the operator's terminal identity when set, never a multiplexer's TERM_PROGRAM", () => {
  assert.deepEqual(terminalIdentityEnv({ COLORTERM: 'truecolor', TERM_PROGRAM: 'WezTerm', TERM_PROGRAM_VERSION: '20240203', TMUX: '/t,1,0' }), [
    { name: 'COLORTERM', value: 'truecolor' },
    { name: 'TERM_PROGRAM', value: 'WezTerm' },
    { name: 'TERM_PROGRAM_VERSION', value: '20240203' },
  ]);
  for (const tp of ['tmux', 'screen', 'zellij']) {
    assert.deepEqual(
      terminalIdentityEnv({ COLORTERM: 'truecolor', TERM_PROGRAM: tp, TERM_PROGRAM_VERSION: '3.4' }),
      [{ name: 'COLORTERM', value: 'truecolor' }],
      tp,
    );
  }
  assert.deepEqual(terminalIdentityEnv({ COLORTERM: '', TERM_PROGRAM_VERSION: '1' }), [{ name: 'TERM_PROGRAM_VERSION', value: '1' }]);
});

test("containerRunArgv: with the host's libraries, each is mounted read-only under /opt/jackin/lib and Node starts through their loader", () => {
  const argv = containerRunArgv({ ...base, capsule: lent });
  for (const lib of DEBIAN_LIBRARIES) {
    const at = argv.indexOf(`${lib.path}:/opt/jackin/lib/${lib.name}:ro`);
    assert.ok(at > 0 && argv[at - 1] === '-v', `${lib.name} is mounted`);
  }
  const image = argv.indexOf('node:24-bookworm');
  assert.deepEqual(argv.slice(image - 2, image + 6), [
    '--entrypoint',
    '/opt/jackin/lib/ld.so',
    'node:24-bookworm',
    '--library-path',
    '/opt/jackin/lib',
    '/opt/jackin/node',
    '--max-semi-space-size=2',
    '--no-concurrent-recompilation',
  ]);
  assert.equal(argv[image + 6], '/opt/jackin/pkg/bin/jackin-capsule.js');
  assert.deepEqual(argv.slice(-3), ['--', 'claude', '--continue']);
  // A name that could leave /opt/jackin/lib is refused.
  assert.throws(() => containerRunArgv({ ...base, capsule: { ...lent, libraries: [{ name: '../node', path: '/usr/lib/x' }] } }), TypeError);
});

/** A runtime from jackin's cache (src/host/runtime/), as `--capsule runtime` lends it. */
const runtime = {
  kind: 'runtime',
  node: '/home/op/.cache/jackin/runtime/x64/node',
  packageRoot: '/home/op/.cache/jackin/runtime/x64/pkg',
  imagePath: '/usr/local/bin:/usr/bin:/bin',
  arch: 'x64',
  root: '/home/op/.cache/jackin/runtime/x64',
} as const;

test("containerRunArgv: a runtime from the cache is mounted where the host's Node and package go, with the same entrypoint", () => {
  const { rows: _r, cols: _c, ...noSize } = base;
  const argv = containerRunArgv({ ...noSize, engine: 'podman', capsule: runtime });
  assert.deepEqual(argv, [
    'podman',
    'run',
    '-d',
    '--init',
    '--name',
    'agent',
    '--label',
    'io.github.jackin-bridge.instance=agent',
    '-v',
    '/home/op/.jackin/sockets/agent:/jackin/run',
    '-v',
    '/home/op/src:/workspace',
    '-w',
    '/workspace',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'JACKIN_RUN_DIR=/jackin/run',
    '--user',
    '1000:1000',
    '-v',
    '/home/op/.cache/jackin/runtime/x64/node:/opt/jackin/node:ro',
    '-v',
    '/home/op/.cache/jackin/runtime/x64/pkg:/opt/jackin/pkg:ro',
    '-e',
    'PATH=/opt/jackin/pkg/container-bin:/opt/jackin/pkg/container-bin/clipboard:/opt/jackin/pkg/container-bin/browser:/usr/local/bin:/usr/bin:/bin',
    '-e',
    'BROWSER=/opt/jackin/pkg/container-bin/browser/jackin-browser',
    '--entrypoint',
    '/opt/jackin/node',
    'node:24-bookworm',
    '--max-semi-space-size=2',
    '--no-concurrent-recompilation',
    '/opt/jackin/pkg/bin/jackin-capsule.js',
    'serve',
    '--name',
    'agent',
    '--run-dir',
    '/jackin/run',
    '--workspace',
    '/workspace',
    '--',
    'claude',
    '--continue',
  ]);
  // The same argv as the host's files at those paths: one code path for both.
  const { arch: _arch, root: _root, ...files } = runtime;
  assert.deepEqual(argv, containerRunArgv({ ...noSize, engine: 'podman', capsule: { ...files, kind: 'host' } }));
});

test("containerRunArgv: a runtime with the host's libraries lent starts through their loader, each library mounted under /opt/jackin/lib", () => {
  const argv = containerRunArgv({ ...base, capsule: { ...runtime, libraries: DEBIAN_LIBRARIES } });
  assert.deepEqual(
    argv.filter((a) => a.includes(':/opt/jackin/') && !a.startsWith('PATH=')),
    [
      '/home/op/.cache/jackin/runtime/x64/node:/opt/jackin/node:ro',
      '/home/op/.cache/jackin/runtime/x64/pkg:/opt/jackin/pkg:ro',
      ...DEBIAN_LIBRARIES.map((l) => `${l.path}:/opt/jackin/lib/${l.name}:ro`),
    ],
  );
  const image = argv.indexOf('node:24-bookworm');
  assert.deepEqual(argv.slice(image - 2, image + 4), [
    '--entrypoint',
    '/opt/jackin/lib/ld.so',
    'node:24-bookworm',
    '--library-path',
    '/opt/jackin/lib',
    '/opt/jackin/node',
  ]);
  assert.throws(() => containerRunArgv({ ...base, capsule: { ...runtime, libraries: [{ name: '../node', path: '/usr/lib/x' }] } }), TypeError);
  assert.throws(
    () => containerRunArgv({ ...base, capsule: { ...runtime, node: '/a:b/node' } }),
    (e) => hasCode(e, 'E_USAGE'),
  );
});

test('explainStartFailure: a runtime with no libraries lent, in an image without glibc, names the runtime and the fix; a foreign architecture says so', () => {
  const logs = 'exec /opt/jackin/node: no such file or directory';
  const e = explainStartFailure(logs, runtime, 'alpine:3');
  assert.ok(hasCode(e, 'E_IMAGE_NOT_GLIBC'));
  assert.match(
    e!.message,
    /capsule runtime's Node \(linux-x64, \/home\/op\/\.cache\/jackin\/runtime\/x64\) could not start in image alpine:3: it needs the image's glibc/,
  );
  assert.match(e!.message, /--capsule image/);
  // With the host's libraries lent the image's C library plays no part: the logs are shown as they are.
  assert.equal(explainStartFailure(logs, { ...runtime, libraries: DEBIAN_LIBRARIES }, 'alpine:3'), null);
  const foreign = explainStartFailure('exec /opt/jackin/node: exec format error', { ...runtime, arch: 'arm64' }, 'arm64v8/debian');
  assert.ok(hasCode(foreign, 'E_CAPSULE_START'));
  assert.match(foreign!.message, /cannot run linux-arm64 binaries/);
  assert.equal(explainStartFailure('jackin-capsule: E_POLICY: bad key', runtime, 'x'), null);
});
