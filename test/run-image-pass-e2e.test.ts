// needs-docker-engine
// `jackin run --image` passes what an agent needs (variables by name or in jackin's private env file, never a
// value in an argv, an env file, mounts, a network, other engine arguments), wires the container's
// browser to link offers, and hands the operator's terminal identity to the program; on Podman and on a real
// Docker engine (each test passes --engine), with the host's Node (`--capsule host`) and with the capsule
// runtime from jackin's cache (`--capsule runtime`, the test run's shared one: helpers/runtime-cache.ts).
// Also: a local `jackin run` leaves the browser alone, and a capsule started by hand gets the same browser
// with `serve --browser` (and the clipboard tools with `--clipboard`).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  INNER_PROMPT,
  INNER_SHELL,
  JACKIN,
  paneFor,
  startSession,
  waitForJackinExit,
  runJackin,
  type JackinResult,
  CAPSULE_BIN,
} from './helpers/jackin-cli.ts';
import { glibcTestImage, type TestEngine, testContainer } from './helpers/podman-image.mjs';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';
import { testDir } from './helpers/test-run.ts';
import { capsuleEnv, lentNode } from './helpers/runtime-cache.ts';

const CONTAINER_START_MS = 60_000;

function scratch(t: TestContext, label: string): string {
  return testDir(t, `jackin-pass-${label}-`, { shared: true });
}

/** Processes on this machine whose command line holds `needle` (`ps` shows command lines to every user). */
function argvHolding(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

/** The operator's terminal identity as the pane's shell has it. */
async function outerIdentity(pane: TmuxPane): Promise<string> {
  await pane.typeLine('clear; echo "ident=$TERM|$COLORTERM|$TERM_PROGRAM|$TERM_PROGRAM_VERSION"');
  const line = /^ident=(.*)$/m.exec(await pane.waitForText(/^ident=.+\|.+\|.+\|.+$/m))![1]!;
  return line;
}

function jackinRaw(args: string[], env: Record<string, string> = {}): Promise<JackinResult> {
  return runJackin(args, { ...process.env, ...env });
}

test('run --image --dry-run prints -e NAME, never a value; bad --env, --env-file and --volume forms are refused with a code and no value', async (t) => {
  const dir = scratch(t, 'dry');
  const secret = `dry-${randomBytes(8).toString('hex')}`;
  const fileSecret = `file-${randomBytes(8).toString('hex')}`;
  writeFileSync(join(dir, 'a.env'), `# keys\nFROM_FILE=${fileSecret}\n`);
  mkdirSync(join(dir, 'cfg'));
  const home = join(dir, 'jh');
  const r = await jackinRaw(
    [
      'run',
      '--image',
      'img',
      '--engine',
      'docker',
      '--name',
      'dry',
      '--workspace',
      dir,
      '--dry-run',
      '--env',
      `GIVEN=${secret}`,
      '-e',
      'FROM_HOST',
      '--env-file',
      join(dir, 'a.env'),
      '--volume',
      `${join(dir, 'cfg')}:/home/agent:ro`,
      '--network',
      'none',
      '--engine-arg=--cap-add=SYS_PTRACE',
      '--',
      'claude',
    ],
    { JACKIN_HOME: home, FROM_HOST: 'host-value' },
  );
  assert.equal(r.code, 0, r.stderr);
  const run = r.stdout.trim().split('\n')[1]!;
  assert.match(run, / -e FROM_FILE -e GIVEN -e FROM_HOST /);
  assert.match(run, new RegExp(` -v ${join(dir, 'cfg')}:/home/agent:ro --network none `));
  // The engine arguments come right before the entrypoint and the image (Node started through the host's loader).
  assert.match(run, / --cap-add=SYS_PTRACE --entrypoint \/opt\/jackin\/lib\/ld\.so img --library-path \/opt\/jackin\/lib \/opt\/jackin\/node /);
  for (const v of [secret, fileSecret, 'host-value']) assert.ok(!r.stdout.includes(v) && !r.stderr.includes(v), `${v} printed`);
  // The values set only on jackin's command line or in the file are not in the environment the printed command runs in.
  assert.match(r.stderr, /^jackin: the command passes FROM_FILE, GIVEN by name: set them in the environment that runs it$/m);

  const bad: Array<[string[], RegExp]> = [
    [['--env', `1BAD=${secret}`], /E_BAD_ENV/],
    [['--env', 'UNSET_HERE'], /UNSET_HERE is not set in this environment.*\(E_BAD_ENV\)/],
    [['--env', `PATH=${secret}`], /PATH is set by jackin run --image itself.*\(E_BAD_ENV\)/],
    [['--volume', `${join(dir, 'nope')}:/x`], /does not exist.*\(E_BAD_VOLUME\)/],
    [['--volume', `${join(dir, 'cfg')}:relative`], /not absolute.*\(E_BAD_VOLUME\)/],
    [['--volume', `${join(dir, 'cfg')}:/x:rx`], /not ro or rw.*\(E_BAD_VOLUME\)/],
  ];
  for (const [args, expected] of bad) {
    const b = await jackinRaw(['run', '--image', 'img', '--engine', 'docker', '--name', 'dry', '--workspace', dir, ...args, '--', 'claude'], {
      JACKIN_HOME: home,
    });
    assert.equal(b.code, 2, `${args.join(' ')}: ${b.stderr}`);
    assert.match(b.stderr, expected);
    assert.ok(!b.stderr.includes(secret), `the value is in the error: ${b.stderr}`);
  }
  // Node 20 itself checks any `--env-file FILE` on the command line, even after the script (nodejs/node#54232):
  // a missing file stops it before jackin runs, naming the file, and nothing starts.
  const missing = await jackinRaw(
    ['run', '--image', 'img', '--engine', 'docker', '--name', 'dry', '--workspace', dir, '--env-file', join(dir, 'missing.env'), '--', 'claude'],
    { JACKIN_HOME: home },
  );
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /missing\.env: not found/);
  // A local run has none of these.
  const local = await jackinRaw(['run', '--env', 'A=1', '--volume', '/tmp:/x', '--', 'true'], { JACKIN_HOME: home });
  assert.equal(local.code, 2);
  assert.match(local.stderr, /^jackin: --env, --volume apply only with --image/m);
});

for (const [engine, capsule] of (['podman', 'docker'] as const satisfies readonly TestEngine[]).flatMap((e) =>
  (['host', 'runtime'] as const).map((c) => [e, c] as const),
)) {
  test(`${engine}, --capsule ${capsule}: run --image: --env by name and --env-file reach the program with no value in any argv; --volume, --network, --engine-arg; the browser makes link offers; the terminal identity reaches the program`, {
    timeout: 240_000,
  }, async (t) => {
    const hostValue = `hv-${randomBytes(8).toString('hex')}`;
    const fileValue = `fv-${randomBytes(8).toString('hex')}`;
    const dir = scratch(t, `${engine}-${capsule}`);
    const envFile = join(dir, 'agent.env');
    writeFileSync(envFile, `JT_FILE_VAL=${fileValue}\n`);
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'f.txt'), 'mounted-read-only\n');
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    chmodSync(ws, 0o777);
    const name = testContainer(t, `${engine}-${capsule}-pass`, engine);
    const image = await glibcTestImage(engine);
    const pane = await paneFor(t, {
      rows: 30,
      cols: 160,
      env: { COLORTERM: 'truecolor', TERM_PROGRAM: 'WezTerm', TERM_PROGRAM_VERSION: '20240203-110809', ...(await capsuleEnv(capsule)) },
    });
    // The host's variable, set in the operator's shell the way a user's profile does: in no command line.
    const profile = join(dir, 'profile.sh');
    writeFileSync(profile, `export JT_HOST_VAL=${hostValue}\n`);
    await pane.typeLine(`. ${shellQuote(profile)}`);
    const outer = await outerIdentity(pane);
    await pane.typeLine(
      `clear; ${JACKIN} run --image ${image.ref} --engine ${engine} --capsule ${capsule} --name ${name} --workspace ${shellQuote(ws)} ` +
        `--env JT_HOST_VAL --env-file ${shellQuote(envFile)} --volume ${shellQuote(data)}:/data:ro --network none --engine-arg=--hostname=jt-pass ` +
        `-- ${INNER_SHELL}; echo "jackin-rc=$?"`,
    );
    await pane.waitForText(INNER_PROMPT, { timeoutMs: CONTAINER_START_MS });
    await pane.typeLine('echo "got=$JT_HOST_VAL,$JT_FILE_VAL"');
    await pane.waitForText(`got=${hostValue},${fileValue}`);
    // The capsule runs on the Node asked for: the host's, or the runtime's from the cache.
    await pane.typeLine('clear; sha256sum /opt/jackin/node');
    const lent = await lentNode(capsule);
    await pane.waitForText(new RegExp(`^${createHash('sha256').update(readFileSync(lent)).digest('hex')}  /opt/jackin/node$`, 'm'));
    // The values are in no process's command line on this machine (jackin's, the engine's, its helpers').
    assert.deepEqual(argvHolding(hostValue), []);
    assert.deepEqual(argvHolding(fileValue), []);

    await pane.typeLine(
      'echo "host=$(cat /proc/sys/kernel/hostname) net=$(echo /sys/class/net/*) data=$(cat /data/f.txt)"; (echo x > /data/new) 2>/dev/null && echo data-rw || echo data-ro',
    );
    await pane.waitForText(/^host=jt-pass net=\/sys\/class\/net\/lo data=mounted-read-only$/m);
    await pane.waitForText(/^data-ro$/m);

    // The operator's terminal: TERM with its value, the rest by name.
    await pane.typeLine('echo "inner-ident=$TERM|$COLORTERM|$TERM_PROGRAM|$TERM_PROGRAM_VERSION"');
    await pane.waitForText(new RegExp(`^inner-ident=${outer.replace(/[|.]/g, (c) => `\\${c}`)}$`, 'm'));

    // The browser: BROWSER and the xdg-open family, each a link offer the operator sees.
    await pane.typeLine('echo "browser=$BROWSER"; command -v xdg-open sensible-browser www-browser');
    await pane.waitForText(/^browser=\/opt\/jackin\/pkg\/container-bin\/browser\/jackin-browser$/m);
    await pane.waitForText(/^\/opt\/jackin\/pkg\/container-bin\/browser\/www-browser$/m);
    for (const [i, opener] of ['"$BROWSER"', 'xdg-open', 'sensible-browser', 'www-browser'].entries()) {
      await pane.typeLine(`${opener} https://example.com/offer-${i}?state=s3cret; echo "open-rc-${i}=$?"`);
      await pane.waitForText(new RegExp(`^open-rc-${i}=0$`, 'm'));
      await pane.waitForText(`Link offered: https://example.com/offer-${i}`);
    }

    await pane.typeLine('exit 0');
    assert.equal(await waitForJackinExit(pane, 30_000), 0);
  });
}

test("local jackin run: the program keeps its own browser and gets the operator's terminal identity", { timeout: 60_000 }, async (t) => {
  const pane = await paneFor(t, {
    env: { COLORTERM: 'truecolor', TERM_PROGRAM: 'WezTerm', TERM_PROGRAM_VERSION: '20240203-110809', BROWSER: 'my-own-browser' },
  });
  const outer = await outerIdentity(pane);
  await startSession(pane, 'local-browser');
  await pane.typeLine(
    'clear; echo "ident=$TERM|$COLORTERM|$TERM_PROGRAM|$TERM_PROGRAM_VERSION browser=$BROWSER xdg=$(command -v xdg-open || echo none) clip=$(command -v xclip || echo none)"',
  );
  const shown = await pane.waitForText(/^ident=.* browser=.* clip=\S+$/m);
  const line = /^ident=(.*) browser=(\S*) xdg=(\S*) clip=(\S*)$/m.exec(shown)!;
  assert.equal(line[1], outer);
  assert.equal(line[2], 'my-own-browser');
  assert.doesNotMatch(line[3]!, /container-bin/);
  assert.doesNotMatch(line[4]!, /container-bin/, "a local program keeps the operator's clipboard tools");
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane), 0);
});

test('a capsule started by hand with serve --browser --clipboard: BROWSER and xdg-open make link offers, xclip copy offers', { timeout: 60_000 }, async (t) => {
  const pane = await paneFor(t);
  // As in an image with the package installed: `jackin-capsule` on PATH.
  const bin = scratch(t, 'bin');
  symlinkSync(CAPSULE_BIN, join(bin, 'jackin-capsule'));
  const run = join(pane.jackinHome, 'sockets', 'hand');
  mkdirSync(run, { recursive: true, mode: 0o700 });
  await pane.typeLine(
    `clear; PATH=${shellQuote(bin)}:$PATH jackin-capsule serve --browser --clipboard --name hand --run-dir ${shellQuote(run)} -- ${INNER_SHELL} >/dev/null 2>&1 & ${JACKIN} attach hand; echo "jackin-rc=$?"`,
  );
  await pane.waitForText(INNER_PROMPT, { timeoutMs: 30_000 });
  await pane.typeLine('clear; echo "browser=$BROWSER"; xdg-open https://example.com/by-hand; echo "open-rc=$?"');
  await pane.waitForText(/^browser=\/.*\/container-bin\/browser\/jackin-browser$/m);
  await pane.waitForText(/^open-rc=0$/m);
  await pane.waitForText('Link offered: https://example.com/by-hand');
  await pane.typeLine('clear; printf by-hand | xclip -selection clipboard; echo "copy-rc=$?"');
  await pane.waitForText(/^copy-rc=0$/m);
  // The palette's entry shows the offer it would copy.
  await pane.sendBytes([0x1c]);
  await pane.waitForText('Copy offered text 7 B "by-hand"');
  await pane.sendKeys('Escape');
  await pane.typeLine('exit 0');
  assert.equal(await waitForJackinExit(pane, 20_000), 0);
});
