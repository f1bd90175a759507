import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CommanderError, type Command } from './commander.ts';
import { buildProgram } from './jackin.ts';
import { earlyRelayArgv } from './early-relay.ts';
import { relayArgv } from '../transport/exec-args.ts';
import { planTransport, selectOptionsFromFlags } from '../transport/select.ts';

/** Thrown from a preAction hook: the command commander would run, with what it parsed. */
class Parsed {
  constructor(readonly command: Command) {}
}

/** The relay argv the real CLI would start for `jackin ARGS`, or null (another command, another transport, a usage error). */
async function cliRelayArgv(args: readonly string[]): Promise<string[] | null> {
  const program = buildProgram(() => {});
  program.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  program.hook('preAction', (_program, command) => {
    throw new Parsed(command);
  });
  try {
    await program.parseAsync(['node', 'jackin', ...args]);
  } catch (e) {
    if (e instanceof CommanderError) return null;
    if (!(e instanceof Parsed)) throw e;
    if (e.command.name() !== 'attach') return null;
    const opts = e.command.opts() as Parameters<typeof selectOptionsFromFlags>[2];
    try {
      const plan = planTransport(selectOptionsFromFlags(e.command.args[0]!, '/nonexistent-home', opts));
      return plan.kind === 'relay' ? relayArgv(plan.spec) : null;
    } catch {
      return null;
    }
  }
  return null;
}

test('the plain attach forms start their relay early, with the argv the CLI would use', async () => {
  const cases: Array<[string[], string[]]> = [
    [
      ['attach', 'agent', '--via', 'podman'],
      ['podman', 'exec', '-i', 'agent', 'jackin-capsule', 'attach-proxy'],
    ],
    [
      ['attach', '--via', 'docker', 'agent'],
      ['docker', 'exec', '-i', 'agent', 'jackin-capsule', 'attach-proxy'],
    ],
    [
      ['attach', '--via=podman', '--verbose', 'a.b_c-1'],
      ['podman', 'exec', '-i', 'a.b_c-1', 'jackin-capsule', 'attach-proxy'],
    ],
    [
      ['attach', 'agent-0', '--via', 'kubectl', '--no-mouse'],
      ['kubectl', 'exec', '-i', 'agent-0', '--', 'jackin-capsule', 'attach-proxy'],
    ],
  ];
  for (const [args, argv] of cases) {
    assert.deepEqual(earlyRelayArgv(args), argv, args.join(' '));
    assert.deepEqual(await cliRelayArgv(args), argv, args.join(' '));
  }
});

test('anything but a plain form starts nothing early', () => {
  for (const args of [
    ['attach', 'agent'],
    ['export', 'agent', '--via', 'podman', '/x'],
    ['attach', 'agent', '--via', 'podman', '--help'],
    ['attach', 'agent', '--via', 'podman', '-n', 'dev'],
    ['attach', 'agent', '--via', 'ssh'],
    ['attach', 'agent', '--via'],
    ['attach', 'agent', 'other', '--via', 'podman'],
    ['attach', 'agent', '--via', 'podman', '--via', 'docker'],
    ['attach', '--socket', '/s', 'agent', '--via', 'podman'],
    ['attach', '-agent', '--via', 'podman'],
    ['attach', 'a/b', '--via', 'podman'],
    ['attach', '--', 'agent', '--via', 'podman'],
    // -v was --verbose; now refused by the CLI (usage-errors.ts), so no relay starts for it.
    ['attach', 'agent', '--via', 'podman', '-v'],
  ]) {
    assert.equal(earlyRelayArgv(args), null, args.join(' '));
  }
});

test('property: whenever a relay starts early, the CLI plans exactly that relay for the same arguments', async () => {
  const word = fc.constantFrom(
    'attach',
    'export',
    'agent',
    'box-1',
    'a.b',
    '-agent',
    'a b',
    '',
    '--via',
    'docker',
    'podman',
    'kubectl',
    'ssh',
    '--via=podman',
    '--via=',
    '-v',
    '--verbose',
    '--no-mouse',
    '--allow-upstream-requests',
    '--socket',
    '/s',
    '-n',
    'ns',
    '-c',
    '--exec',
    '--help',
    '-h',
    '--',
    '-V',
  );
  const neutral = fc.constantFrom('--verbose', '--no-mouse', '--allow-upstream-requests');
  let started = 0;
  await fc.assert(
    // Mostly a plain form with words added and the order shuffled, so that many runs start a relay early.
    fc.asyncProperty(
      fc.oneof(
        fc.array(word, { maxLength: 7 }),
        fc
          .tuple(
            fc.constantFrom('agent', 'box-1', 'a.b'),
            fc.constantFrom('docker', 'podman', 'kubectl'),
            fc.array(fc.oneof({ weight: 3, arbitrary: neutral }, { weight: 1, arbitrary: word }), { maxLength: 3 }),
          )
          .chain(([name, engine, extra]) => fc.shuffledSubarray([name, `--via=${engine}`, ...extra], { minLength: 2 + extra.length })),
      ),
      async (rest) => {
        const args = ['attach', ...rest];
        const early = earlyRelayArgv(args);
        if (early !== null) {
          started++;
          assert.deepEqual(await cliRelayArgv(args), early, args.join(' '));
        }
      },
    ),
    { numRuns: 400 },
  );
  assert.ok(started > 100, `only ${started} of 400 runs started a relay early`);
});
