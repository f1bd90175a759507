import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '../../errors.ts';
import { resolveInstance } from './resolve-instance.ts';

/** A JACKIN_HOME, and a PATH holding only the stand-in engines given (shell scripts), for this test. */
function setUp(t: TestContext, engines: Record<string, string> = {}): { home: string; bin: string } {
  // A short name: the live socket's path must fit a socket address with a 60-character TMPDIR too.
  const dir = mkdtempSync(join(tmpdir(), 'jr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, script] of Object.entries(engines)) writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  const oldPath = process.env['PATH'];
  // sh itself must stay reachable for the stand-ins' #! line: it is found by absolute path, not PATH.
  process.env['PATH'] = bin;
  t.after(() => (process.env['PATH'] = oldPath));
  return { home: join(dir, 'home'), bin };
}

function rejectsWith(code: string, pattern: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(hasCode(e, code as never), `${code}: ${String(e)}`);
    assert.match((e as Error).message, pattern);
    return true;
  };
}

const NO_SUCH = `echo "$@" >> "\${0%/*}/asked"; echo 'Error response from daemon: No such container: ghost' >&2; exit 1`;

test('resolveInstance: no run directory, and docker has no such container: E_NO_INSTANCE saying where it looked', async (t) => {
  const { home, bin } = setUp(t, { docker: NO_SUCH });
  await assert.rejects(
    resolveInstance({ instance: 'ghost', jackinHome: home }),
    rejectsWith(
      'E_NO_INSTANCE',
      /^no instance named ghost: none in .*\/home\/sockets, and docker has no container of that name \(`docker ps -a` lists them\); `jackin ls`.*`jackin run --name ghost`/,
    ),
  );
  assert.equal(readFileSync(join(bin, 'asked'), 'utf8'), 'inspect --type container --format {{.State.Status}} ghost\n');
});

test('resolveInstance: an engine that cannot be asked, or none installed, is still E_NO_INSTANCE, naming why', async (t) => {
  const down = setUp(t, { docker: `echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2; exit 1` });
  await assert.rejects(
    resolveInstance({ instance: 'ghost', jackinHome: down.home }),
    rejectsWith('E_NO_INSTANCE', /docker could not be asked for a container \(docker inspect failed: Cannot connect to the Docker daemon/),
  );
});

test('resolveInstance: neither engine installed: E_NO_INSTANCE says so', async (t) => {
  const none = setUp(t);
  await assert.rejects(
    resolveInstance({ instance: 'ghost', jackinHome: none.home }),
    rejectsWith('E_NO_INSTANCE', /none in .*, and neither docker nor podman is installed to look for a container/),
  );
});

test('resolveInstance: a container of that name that runs resolves; one that exited is E_CONTAINER_STOPPED with the engine command to start it', async (t) => {
  const running = setUp(t, { podman: `echo running` });
  await resolveInstance({ instance: 'box', jackinHome: running.home });
  const exited = setUp(t, { podman: `echo exited` });
  await assert.rejects(
    resolveInstance({ instance: 'box', jackinHome: exited.home }),
    rejectsWith('E_CONTAINER_STOPPED', /container box is not running \(podman says: exited\): start it with `podman start box`/),
  );
});

test('resolveInstance: --via asks that engine (E_NO_INSTANCE when it has no such container); --socket and --exec ask nothing', async (t) => {
  const { home, bin } = setUp(t, { podman: NO_SUCH, docker: 'echo running' });
  await assert.rejects(
    resolveInstance({ instance: 'ghost', jackinHome: home, via: 'podman' }),
    rejectsWith('E_NO_INSTANCE', /podman has no container of that name/),
  );
  await resolveInstance({ instance: 'ghost', jackinHome: home, via: 'docker' });
  await resolveInstance({ instance: 'ghost', jackinHome: home, socket: '/nowhere/jackin.sock' });
  await resolveInstance({ instance: 'ghost', jackinHome: home, exec: 'false' });
  assert.equal(readFileSync(join(bin, 'asked'), 'utf8').split('\n').filter(Boolean).length, 1, 'only --via podman asked an engine');
});

test('resolveInstance: --via kubectl asks kubectl for the pod (its namespace too): NotFound is E_NO_INSTANCE, a pod or a cluster it cannot reach resolves', async (t) => {
  const { home, bin } = setUp(t, {
    kubectl: `echo "$@" >> "\${0%/*}/asked"; case "$3" in ghost) echo 'Error from server (NotFound): pods "ghost" not found' >&2; exit 1;; away) echo 'Unable to connect to the server' >&2; exit 1;; esac; echo "pod/$3"`,
  });
  await assert.rejects(
    resolveInstance({ instance: 'ghost', jackinHome: home, via: 'kubectl', namespace: 'dev' }),
    rejectsWith('E_NO_INSTANCE', /^no instance named ghost: kubectl has no pod of that name in namespace dev \(`kubectl get pods` lists them\)/),
  );
  await resolveInstance({ instance: 'agent', jackinHome: home, via: 'kubectl' });
  await resolveInstance({ instance: 'away', jackinHome: home, via: 'kubectl' });
  assert.deepEqual(readFileSync(join(bin, 'asked'), 'utf8').split('\n').filter(Boolean), [
    'get pod ghost -n dev -o name',
    'get pod agent -o name',
    'get pod away -o name',
  ]);
});

test('resolveInstance: a local run directory with a log and a socket nothing listens on is E_INSTANCE_DEAD, and no engine is asked', async (t) => {
  const { home, bin } = setUp(t, { docker: NO_SUCH });
  const runDir = join(home, 'sockets', 'gone');
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, 'capsule.log'), '');
  writeFileSync(join(runDir, 'jackin.sock'), '');
  await assert.rejects(
    resolveInstance({ instance: 'gone', jackinHome: home }),
    rejectsWith(
      'E_INSTANCE_DEAD',
      /^the capsule of gone is not running: .*nothing listens on its socket; remove it with `jackin rm gone`, or start it again with `jackin run --name gone`$/,
    ),
  );
  // The same without a log, when capsule.json names a pid of this host's PID namespace (a capsule started by hand).
  rmSync(join(runDir, 'capsule.log'));
  let ns: string | null = null;
  try {
    ns = readlinkSync('/proc/self/ns/pid');
  } catch {
    ns = null;
  }
  if (ns !== null) {
    writeFileSync(join(runDir, 'capsule.json'), JSON.stringify({ pid: 1, pidNamespace: ns }));
    await assert.rejects(resolveInstance({ instance: 'gone', jackinHome: home }), rejectsWith('E_INSTANCE_DEAD', /not running/));
  }
  assert.throws(() => readFileSync(join(bin, 'asked')), /ENOENT/);
});

test('resolveInstance: a live local socket, or a run directory a container mounts (no log, capsule.json of another PID namespace), resolves', async (t) => {
  const { home } = setUp(t, { docker: NO_SUCH });
  const live = join(home, 'sockets', 'live');
  mkdirSync(live, { recursive: true });
  writeFileSync(join(live, 'capsule.log'), '');
  const server = createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(join(live, 'jackin.sock'), () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  await resolveInstance({ instance: 'live', jackinHome: home });
  const mounted = join(home, 'sockets', 'mounted');
  mkdirSync(mounted, { recursive: true });
  writeFileSync(join(mounted, 'jackin.sock'), '');
  writeFileSync(join(mounted, 'capsule.json'), JSON.stringify({ pid: 7, pidNamespace: 'pid:[1]' }));
  await resolveInstance({ instance: 'mounted', jackinHome: home });
});

test("resolveInstance: an empty run directory (made for a container about to start) resolves without asking an engine; one holding only a clean capsule's log does not", async (t) => {
  const { home, bin } = setUp(t, { docker: NO_SUCH });
  mkdirSync(join(home, 'sockets', 'soon'), { recursive: true });
  await resolveInstance({ instance: 'soon', jackinHome: home });
  assert.throws(() => readFileSync(join(bin, 'asked'), 'utf8'), /ENOENT/, 'no engine was asked');
  const ended = join(home, 'sockets', 'ended');
  mkdirSync(ended, { recursive: true });
  writeFileSync(join(ended, 'capsule.log'), 'program exited with status 0\n');
  await assert.rejects(resolveInstance({ instance: 'ended', jackinHome: home }), rejectsWith('E_NO_INSTANCE', /^no instance named ended: none in /));
});
