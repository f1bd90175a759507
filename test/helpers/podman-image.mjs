/**
 * Container images for the real-engine tests, built with no registry: a root filesystem of this host's own
 * binaries (bash, coreutils, the libraries `ldd` lists for them, libutil for node-pty) imported with
 * `podman import` or `docker import` (each engine keeps its own images; Docker's engine is the one
 * scripts/docker-engine.sh starts). There is no jackin and no Node inside: `jackin run --image` must bring its own.
 *
 * An image is named by a hash of everything that goes into it, so it is built once per content and reused
 * by every test and every later run until a binary changes. Tests never remove it (it is the cache); they
 * remove only the containers they start, by the exact name they gave them.
 *
 * Plain JavaScript (with podman-image.d.mts for the tests) so that bench/ builds the same image.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
const execFileP = promisify(execFile);
/** Programs the test images carry (besides the dynamic loader and libraries they need). */
const PROGRAMS = ['bash', 'sh', 'cat', 'sleep', 'true', 'env', 'id', 'ls', 'stat', 'sha256sum', 'stty', 'head', 'mkdir', 'rm', 'ps', 'printf', 'tail'];
/** node-pty's native module links libutil, which no program above needs. */
const EXTRA_LIBS = ['libutil.so.1'];
/** Bumped when the recipe below changes in a way the file list does not show. */
const RECIPE = 'jackin-test-rootfs-1';
const PASSWD = 'root:x:0:0:root:/root:/bin/bash\nop:x:1000:1000:operator:/home/op:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n';
const GROUP = 'root:x:0:\nop:x:1000:\nnogroup:x:65534:\n';
/** The program's file on PATH (not a shell builtin of the same name), or '' when there is none. */
function which(program) {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(':')) {
    const path = join(dir, program);
    if (existsSync(path)) return path;
  }
  return '';
}
/** Absolute paths of the shared libraries (and loader) `ldd` lists for `binary`. */
function libsOf(binary) {
  let out;
  try {
    out = execFileSync('ldd', [binary], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return []; // static: "not a dynamic executable"
  }
  const paths = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) paths.push(m[1]);
  }
  return paths;
}
function libDirOf() {
  // Where this host keeps libutil (Debian: /lib/x86_64-linux-gnu).
  const libc = libsOf(which('bash')).find((p) => /\/libc\.so\.6$/.test(p));
  if (libc === undefined) throw new Error('cannot find libc.so.6 in `ldd bash`');
  return dirname(libc);
}
/** Every file of the glibc test image: in-image path → host file to copy. */
function glibcFiles() {
  const files = new Map();
  for (const p of PROGRAMS) {
    const path = which(p);
    if (path === '') throw new Error(`${p} is not installed (needed for the test image)`);
    files.set(path, path);
    for (const lib of libsOf(path)) files.set(lib, lib);
  }
  const libDir = libDirOf();
  for (const lib of EXTRA_LIBS) {
    files.set(join(libDir, lib), join(libDir, lib));
    // node's own libraries, in case a later Node links more than this one (it must run from the mount).
    for (const l of libsOf(process.execPath)) files.set(l, l);
  }
  return files;
}
/** The empty directories, /tmp and the passwd and group files every test image has. */
function skeleton(root) {
  for (const d of ['proc', 'sys', 'dev', 'run', 'etc', 'root', 'home/op', 'jackin/run']) mkdirSync(join(root, d), { recursive: true });
  mkdirSync(join(root, 'tmp'), { mode: 0o1777, recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  writeFileSync(join(root, 'etc', 'passwd'), PASSWD);
  writeFileSync(join(root, 'etc', 'group'), GROUP);
}
/** Builds (or finds, by content hash) an image from `files` plus passwd/group and the usual empty dirs. */
async function ensureImage(engine, repo, files, links = []) {
  const sorted = [...files.entries()].sort(([a], [b]) => a.localeCompare(b));
  const hash = createHash('sha256').update(RECIPE).update(PASSWD).update(GROUP);
  for (const [inImage, host] of sorted) hash.update(inImage).update('\0').update(readFileSync(host)).update('\0');
  for (const [link, target] of links) hash.update(link).update('\0').update(target).update('\0');
  const ref = `localhost/${repo}:${hash.digest('hex').slice(0, 16)}`;
  const exists = await execFileP(engine, ['image', 'inspect', '--format', '{{.Id}}', ref]).then(
    () => true,
    () => false,
  );
  if (exists) return { ref };
  const root = mkdtempSync(join(tmpdir(), `${repo}-`));
  try {
    skeleton(root);
    for (const [inImage, host] of sorted) {
      const dest = join(root, inImage);
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(realpathSync(host), dest);
      chmodSync(dest, 0o755);
    }
    for (const [link, target] of links) symlinkSync(target, join(root, link));
    // Debian's /bin and /lib are symlinks to /usr/...: the programs found there must also be reachable.
    for (const [link, target] of [
      ['bin', 'usr/bin'],
      ['lib', 'usr/lib'],
      ['lib64', 'usr/lib64'],
      ['sbin', 'usr/sbin'],
    ]) {
      mergeUsr(root, link, target);
    }
    await execFileP('sh', ['-c', 'tar -C "$1" -cf - . | "$3" import --change \'CMD ["sleep","infinity"]\' - "$2" >/dev/null', 'sh', root, ref, engine], {
      maxBuffer: 1 << 20,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { ref };
}
/** Moves `root/link` into `root/target` (merged /usr) and leaves a symlink, as Debian 12 does. */
function mergeUsr(root, link, target) {
  execFileSync('sh', [
    '-c',
    'cd "$1" && if [ -d "$2" ] && [ ! -L "$2" ]; then mkdir -p "$3" && cp -a "$2"/. "$3"/ && rm -rf "$2"; fi; [ -e "$2" ] || ln -s "$3" "$2"',
    'sh',
    root,
    link,
    target,
  ]);
}
/** One build per engine and image per test process. */
const built = new Map();
function cached(engine, repo, files, links = () => []) {
  const key = `${engine} ${repo}`;
  if (!built.has(key)) built.set(key, ensureImage(engine, repo, files(), links()));
  return built.get(key);
}
/** A glibc image with bash and coreutils and no jackin, no Node. */
export function glibcTestImage(engine = 'podman') {
  return cached(engine, 'jackin-test-glibc', glibcFiles);
}
/**
 * Debian's perl-base (Essential: in every Debian- and Ubuntu-based image) with the libraries it and its
 * modules need, as dpkg lists it on this host.
 */
function perlBaseFiles() {
  let listed;
  try {
    listed = execFileSync('dpkg', ['-L', 'perl-base'], { encoding: 'utf8' });
  } catch (e) {
    throw new Error(`cannot list perl-base with dpkg (needed for the test image with perl): ${e instanceof Error ? e.message : String(e)}`);
  }
  const files = new Map();
  for (const path of listed.split('\n')) {
    if (path === '' || !existsSync(path) || !lstatSync(path).isFile()) continue;
    files.set(path, path);
    if (path === '/usr/bin/perl' || path.endsWith('.so')) for (const lib of libsOf(path)) files.set(lib, lib);
  }
  if (!files.has('/usr/bin/perl')) throw new Error('dpkg -L perl-base lists no /usr/bin/perl');
  return files;
}
/**
 * The glibc image plus the libraries the given agent binaries link (Claude Code's native binary needs
 * librt, libpthread, libdl and libm): the binaries themselves are mounted, not copied (400 MB).
 */
export function glibcAgentTestImage(engine = 'podman', binaries = []) {
  return cached(engine, `jackin-test-glibc-agents`, () => {
    const files = glibcFiles();
    for (const b of binaries) for (const lib of libsOf(b)) files.set(lib, lib);
    return files;
  });
}
/** The glibc image plus Debian's perl-base, as most real images have it: `attach-proxy` then runs on perl. */
export function glibcPerlTestImage(engine = 'podman') {
  return cached(engine, 'jackin-test-glibc-perl', () => new Map([...glibcFiles(), ...perlBaseFiles()]));
}
/** Debian's busybox-static: one static binary, which must not be the dynamic busybox of Debian's busybox package. */
function staticBusybox() {
  const path = which('busybox');
  if (path === '') throw new Error('busybox is not installed (apt-get install busybox-static)');
  if (libsOf(path).length > 0) throw new Error(`${path} is a dynamic busybox: install busybox-static`);
  return path;
}
/**
 * An image of busybox-static alone: no C library, no loader, no Node, no perl, as the smallest images
 * are. /bin/sh and every other applet are links to /bin/busybox.
 */
export function busyboxTestImage(engine = 'podman') {
  return cached(
    engine,
    'jackin-test-busybox',
    () => new Map([['/bin/busybox', staticBusybox()]]),
    () =>
      execFileSync(staticBusybox(), ['--list'], { encoding: 'utf8' })
        .split('\n')
        .filter((a) => /^[a-z0-9_.[-]+$/.test(a) && a !== 'busybox')
        .map((a) => [`bin/${a}`, 'busybox']),
  );
}
/** The arm64 image's Debian packages, which scripts/setup-arm64.sh downloads (its list must match). */
const ARM64_PACKAGES = ['busybox-static', 'libc6', 'libstdc++6', 'libgcc-s1'];
const ARM64_DEBS = '/var/cache/jackin-bridge/arm64-debs';
const QEMU_AARCH64 = '/usr/bin/qemu-aarch64-static';
const ARM64_SETUP = 'run scripts/setup-arm64.sh as root after apt-get install qemu-user-static (docs/testing.md)';
/**
 * Throws, naming the set-up step, unless this machine runs arm64 programs in containers: qemu-aarch64
 * registered with binfmt_misc with the F flag (the kernel holds the interpreter open, so it works in a
 * container whose root has no qemu). Nothing to check on an arm64 machine.
 */
export function assertArm64Emulation() {
  if (process.arch === 'arm64') return;
  const entry = '/proc/sys/fs/binfmt_misc/qemu-aarch64';
  let text;
  try {
    text = readFileSync(entry, 'utf8');
  } catch {
    throw new Error(`arm64 containers cannot run here: ${entry} is missing (qemu-aarch64 is not registered with binfmt_misc): ${ARM64_SETUP}`);
  }
  const lines = text.split('\n');
  if (!lines.includes('enabled')) throw new Error(`arm64 containers cannot run here: ${entry} is disabled: ${ARM64_SETUP}`);
  const flags = lines.find((l) => l.startsWith('flags: ')) ?? 'flags: ';
  if (!flags.slice('flags: '.length).includes('F')) {
    throw new Error(
      `arm64 containers cannot run here: qemu-aarch64 is registered without the F flag (${flags}), so containers cannot reach it: ${ARM64_SETUP}`,
    );
  }
}
/** The cached arm64 .debs, one per package, or an error naming the set-up step. */
function arm64Debs() {
  let names;
  try {
    names = readdirSync(ARM64_DEBS);
  } catch {
    throw new Error(`${ARM64_DEBS} is missing (the arm64 test image's packages): ${ARM64_SETUP}`);
  }
  return ARM64_PACKAGES.map((p) => {
    const found = names.filter((n) => n.startsWith(`${p}_`) && n.endsWith('_arm64.deb'));
    if (found.length !== 1) throw new Error(`${ARM64_DEBS} holds ${found.length} ${p} arm64 packages, not 1: ${ARM64_SETUP}`);
    return join(ARM64_DEBS, found[0]);
  });
}
/**
 * Builds (or finds, by content hash) the arm64 image: Debian's arm64 busybox-static, glibc, libstdc++ and
 * libgcc unpacked into a root filesystem, written as a docker-archive whose config records arm64, and loaded
 * with `ENGINE load`: `podman import --arch arm64` works, but Docker 20.10's `import --platform` records the
 * host's amd64, so one archive serves both engines.
 */
async function ensureArm64Image(engine) {
  const debs = arm64Debs();
  const hash = createHash('sha256').update(RECIPE).update('arm64-2').update(PASSWD).update(GROUP);
  for (const deb of debs) hash.update(basename(deb)).update('\0').update(readFileSync(deb)).update('\0');
  const ref = `localhost/jackin-test-arm64:${hash.digest('hex').slice(0, 16)}`;
  const exists = await execFileP(engine, ['image', 'inspect', '--format', '{{.Architecture}}', ref]).then(
    (r) => r.stdout.trim() === 'arm64',
    () => false,
  );
  if (exists) return { ref };
  const work = mkdtempSync(join(tmpdir(), 'jackin-test-arm64-'));
  try {
    const root = join(work, 'root');
    mkdirSync(root);
    for (const deb of debs) execFileSync('dpkg-deb', ['-x', deb, root]);
    rmSync(join(root, 'usr', 'share'), { recursive: true, force: true }); // documentation only
    skeleton(root);
    // busybox's own applet list, run through qemu by name on x64: the image is built before anything needs binfmt.
    const busybox = join(root, 'bin', 'busybox');
    if (process.arch !== 'arm64' && !existsSync(QEMU_AARCH64)) throw new Error(`${QEMU_AARCH64} is missing: ${ARM64_SETUP}`);
    const applets =
      process.arch === 'arm64'
        ? execFileSync(busybox, ['--list'], { encoding: 'utf8' })
        : execFileSync(QEMU_AARCH64, [busybox, '--list'], { encoding: 'utf8' });
    for (const a of applets.split('\n')) {
      if (/^[a-z0-9_.[-]+$/.test(a) && a !== 'busybox' && !existsSync(join(root, 'bin', a))) symlinkSync('busybox', join(root, 'bin', a));
    }
    execFileSync('tar', ['--numeric-owner', '-C', root, '-cf', join(work, 'layer.tar'), '.']);
    const diffId = createHash('sha256')
      .update(readFileSync(join(work, 'layer.tar')))
      .digest('hex');
    const config = { architecture: 'arm64', os: 'linux', config: { Cmd: ['sleep', 'infinity'] }, rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] } };
    writeFileSync(join(work, 'config.json'), JSON.stringify(config));
    writeFileSync(join(work, 'manifest.json'), JSON.stringify([{ Config: 'config.json', RepoTags: [ref], Layers: ['layer.tar'] }]));
    await execFileP('sh', ['-c', 'tar -C "$1" -cf - manifest.json config.json layer.tar | "$2" load >/dev/null', 'sh', work, engine], { maxBuffer: 1 << 20 });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { ref };
}
/**
 * An arm64 image (its config says arm64) of Debian's arm64 busybox-static, glibc and libstdc++: the C++
 * libraries a Node needs, and nothing else (no Node, no jackin). Runs on x64 through qemu
 * (assertArm64Emulation).
 */
export function arm64TestImage(engine = 'podman') {
  const key = `${engine} jackin-test-arm64`;
  if (!built.has(key)) built.set(key, ensureArm64Image(engine));
  return built.get(key);
}
/** A container name unique to this test run, with the branch-neutral prefix tests clean up by. */
export function containerName(label) {
  return `jackin-test-${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
/** Removes a container a test started, by its exact name; a container already gone is fine. */
export async function removeContainer(name, engine = 'podman') {
  await execFileP(engine, engine === 'podman' ? ['rm', '-f', '-t', '0', name] : ['rm', '-f', name]).catch(() => undefined);
}
/** A container name for one test (containerName), whose container is removed when the test ends, whatever happened. */
export function testContainer(t, label, engine = 'podman') {
  const name = containerName(label);
  t.after(() => removeContainer(name, engine));
  return name;
}
