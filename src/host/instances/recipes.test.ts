import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hasCode } from '../../errors.ts';
import { containerRunArgv, type ContainerRunSpec } from './container-run-argv.ts';
import { composeRecipe, devcontainerRecipe, runSettings } from './recipes.ts';
import { REFERENCE_CAPSULE } from '../../../test/helpers/reference-operator.ts';

const guide = readFileSync(new URL('../../../docs/guide.md', import.meta.url), 'utf8');

/** The operator the guide's examples are written for: uid 1000, home /home/op, Node and jackin where Debian's npm puts them. */
const reference: ContainerRunSpec = {
  engine: 'docker',
  name: 'agent',
  image: 'my-agent',
  runDir: '/home/op/.jackin/sockets/agent',
  workspace: '/home/op/project',
  program: ['claude'],
  user: '1000:1000',
  term: 'xterm-256color',
  capsule: REFERENCE_CAPSULE,
};
const places = { home: '/home/op', workspace: '/home/op/project', values: new Map<string, string>() };

/** The first fenced block of `lang` after `heading` in the guide. */
function guideBlock(heading: string, lang: string): string {
  const at = guide.indexOf(heading);
  assert.ok(at !== -1, `the guide has ${heading}`);
  const block = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(guide.slice(at))?.[1];
  assert.ok(block !== undefined, `a ${lang} block follows ${heading}`);
  return block;
}

test('docs/guide.md: the compose service is what --dry-run --format compose prints for the reference operator', () => {
  assert.equal(guideBlock('### Compose', 'yaml'), composeRecipe(containerRunArgv(reference), places));
});

test('docs/guide.md: the devcontainer.json is what --dry-run --format devcontainer prints, initializeCommand included', () => {
  const text = devcontainerRecipe(containerRunArgv(reference), places);
  assert.equal(guideBlock('### Dev containers', 'json'), text);
  const dc = JSON.parse(text) as Record<string, unknown>;
  assert.equal(dc['initializeCommand'], 'mkdir -p -m 700 ${localEnv:HOME}/.jackin/sockets/agent');
  assert.equal(dc['workspaceMount'], 'type=bind,source=${localWorkspaceFolder},target=/workspace');
});

test("docs/guide.md: the five-minute compose service is the recipe for its jackin run command (key by name, HOME typed, the agent's mounts)", () => {
  const spec: ContainerRunSpec = {
    ...reference,
    name: 'claude',
    image: 'node:24-bookworm',
    runDir: '/home/op/.jackin/sockets/claude',
    program: ['/opt/agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe'],
    envNames: ['ANTHROPIC_API_KEY', 'HOME'],
    volumes: [
      { host: '/home/op/agents/claude-home', container: '/home/agent', mode: null },
      { host: '/home/op/agents/bin', container: '/opt/agents', mode: 'ro' },
    ],
  };
  const five = guideBlock('## Five minutes', 'yaml');
  assert.equal(five, composeRecipe(containerRunArgv(spec), { ...places, values: new Map([['HOME', '/home/agent']]) }));
  // The command the file was made from is the section's Linux one (Claude Code on the host).
  const sh = guideBlock('On Linux, Claude Code can also live on the host', 'sh');
  assert.match(sh, /jackin run --image node:24-bookworm --name claude \\\n\s+-e ANTHROPIC_API_KEY -e HOME=\/home\/agent \\\n/);
  assert.match(
    sh,
    /-v ~\/agents\/claude-home:\/home\/agent -v ~\/agents\/bin:\/opt\/agents:ro \\\n\s+-- \/opt\/agents\/node_modules\/@anthropic-ai\/claude-code\/bin\/claude\.exe\n/,
  );
});

test("docs/guide.md: the pod manifest's command is the capsule's, as jackin run --image --capsule image starts it", () => {
  const argv = containerRunArgv({ ...reference, capsule: { kind: 'image' } });
  const serve = argv.slice(argv.indexOf('my-agent') + 1);
  const pod = guideBlock('## Kubernetes', 'yaml');
  const command = JSON.parse(/^ {6}command: (.*)$/m.exec(pod)![1]!) as string[];
  assert.deepEqual(command, ['jackin-capsule', ...serve]);
  assert.match(pod, /^ {8}- name: JACKIN_RUN_DIR\n {10}value: \/jackin\/run$/m);
  assert.match(pod, /^ {8}- \{name: run, mountPath: \/jackin\/run\}$/m);
});

test('composeRecipe: values compose or YAML would read otherwise are quoted, and every literal $ is doubled', () => {
  const argv = containerRunArgv({
    ...reference,
    user: '0',
    image: 'reg.example:5000/agent:1',
    program: ['sh', '-c', 'echo $HOME: # not a comment'],
    envNames: ['SECRET', 'GREETING', 'FLAG'],
    network: 'none',
  });
  const text = composeRecipe(argv, {
    ...places,
    values: new Map([
      ['GREETING', 'a: b #c $x'],
      ['FLAG', 'yes'],
    ]),
  });
  assert.match(text, /^ {4}user: "0"$/m);
  assert.match(text, /^ {4}image: reg\.example:5000\/agent:1$/m);
  assert.match(text, /^ {4}network_mode: none$/m);
  assert.match(text, /^ {6}SECRET: "\$\{SECRET\}"$/m);
  assert.equal(JSON.parse(/^ {6}GREETING: (.*)$/m.exec(text)![1]!), 'a: b #c $$x');
  assert.match(text, /^ {6}FLAG: "yes"$/m);
  assert.match(text, /"echo \$\$HOME: # not a comment"\]$/m);
  // The values of variables not typed on the command line never reach the file.
  assert.doesNotMatch(text, /SECRET: (?!"\$\{SECRET\}")/);
});

test('devcontainerRecipe: a variable by name is read from the host environment; --network becomes runArgs; paths under home and workspace', () => {
  const argv = containerRunArgv({
    ...reference,
    envNames: ['ANTHROPIC_API_KEY'],
    network: 'none',
    volumes: [
      { host: '/home/op/project/data', container: '/data', mode: 'ro' },
      { host: '/srv/shared', container: '/shared', mode: null },
    ],
  });
  const dc = JSON.parse(devcontainerRecipe(argv, places)) as { containerEnv: Record<string, string>; runArgs: string[]; mounts: string[] };
  assert.equal(dc.containerEnv['ANTHROPIC_API_KEY'], '${localEnv:ANTHROPIC_API_KEY}');
  assert.deepEqual(dc.runArgs, ['--network=none']);
  assert.ok(dc.mounts.includes('type=bind,source=${localWorkspaceFolder}/data,target=/data,readonly'));
  assert.ok(dc.mounts.includes('type=bind,source=/srv/shared,target=/shared'));
});

test('runSettings: an --engine-arg has no recipe form and is refused with E_USAGE, naming it', () => {
  const argv = containerRunArgv({ ...reference, engineArgs: ['--cap-add=SYS_PTRACE'] });
  assert.throws(
    () => composeRecipe(argv, places),
    (e: unknown) => hasCode(e, 'E_USAGE') && /--cap-add=SYS_PTRACE has no compose or devcontainer form/.test((e as Error).message),
  );
  // The argv reads back to the settings it was made from.
  const s = runSettings(containerRunArgv(reference));
  assert.equal(s.image, 'my-agent');
  assert.deepEqual(s.program, ['claude']);
  assert.equal(s.entrypoint.at(-1), '--');
});
