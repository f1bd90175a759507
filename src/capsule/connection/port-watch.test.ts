import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { listeningPorts, parseListening, PortWatch, readListeningPorts, TrailingThrottle } from './port-watch.ts';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const row = (sl: number, local: string, st: string, inode: number): string =>
  `   ${sl}: ${local} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;

test('parseListening: LISTEN sockets a forward reaches (loopback or any address), little- and big-endian tables', () => {
  const v4 =
    HEADER +
    row(0, '0100007F:1435', '0A', 11) + // 127.0.0.1:5173
    row(1, '00000000:1F90', '0A', 12) + // 0.0.0.0:8080
    row(2, '0200A8C0:0016', '0A', 13) + // 192.168.0.2:22: not reachable through the loopback
    row(3, '0100007F:0BB8', '01', 14) + // ESTABLISHED
    row(4, '0100007F:0000', '0A', 15); // port 0
  assert.deepEqual(parseListening(v4, true), [
    { port: 5173, inode: '11' },
    { port: 8080, inode: '12' },
  ]);
  assert.deepEqual(parseListening(HEADER + row(0, '7F000001:1435', '0A', 11), false), [{ port: 5173, inode: '11' }]);
  const v6 =
    HEADER +
    row(0, '00000000000000000000000001000000:0BB8', '0A', 21) + // ::1:3000
    row(1, '00000000000000000000000000000000:0BB9', '0A', 22) + // :::3001
    row(2, '0000000000000000FFFF00000100007F:0BBA', '0A', 23) + // ::ffff:127.0.0.1:3002
    row(3, '000080FE00000000FF565002BDCA0EFE:0BBB', '0A', 24); // fe80::...: not reachable
  assert.deepEqual(
    parseListening(v6, true).map((s) => s.port),
    [3000, 3001, 3002],
  );
});

test('parseListening never throws on arbitrary text, and yields only ports 1..65535', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.array(fc.constantFrom('0A', ':', ' ', '\n', '0100007F:1435', '0', 'F', '1:', '9')).map((a) => a.join('')),
      ),
      (text) => {
        for (const s of parseListening(text)) assert.ok(Number.isInteger(s.port) && s.port >= 1 && s.port <= 65535);
      },
    ),
    { numRuns: 2000 },
  );
});

test('listeningPorts: ascending, each once, the 256 lowest', () => {
  assert.deepEqual(
    listeningPorts([
      { port: 8080, inode: '1' },
      { port: 5173, inode: '2' },
      { port: 8080, inode: '3' },
    ]),
    [5173, 8080],
  );
  const many = Array.from({ length: 300 }, (_, i) => ({ port: 1000 + 300 - i, inode: String(i) }));
  assert.deepEqual(
    listeningPorts(many),
    Array.from({ length: 256 }, (_, i) => 1001 + i),
  );
});

test('readListeningPorts: a loopback listener of another process is seen, one on another address is not', async (t) => {
  const server = createServer();
  // Bound to an address a forward cannot reach (not the loopback, not any): left out.
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  t.after(() => server.close());
  const own = (server.address() as AddressInfo).port;
  const child = spawn(process.execPath, ['-e', "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log(s.address().port))"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill());
  const theirs = await new Promise<number>((r) => child.stdout.once('data', (b: Buffer) => r(Number(b.toString().trim()))));
  const ports = await readListeningPorts();
  assert.ok(ports.includes(theirs), `${theirs} in ${ports.join(',')}`);
  assert.ok(!ports.includes(own));
});

test('TrailingThrottle: no run without a poke; a burst of pokes is one run, and a poke during a run is one more after it', async () => {
  let runs = 0;
  let release: () => void = () => {};
  const th = new TrailingThrottle(
    () => {
      runs++;
      return new Promise<void>((r) => (release = r));
    },
    { intervalMs: 40, settleMs: 5 },
  );
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(runs, 0, 'no clock without a poke');
  for (let i = 0; i < 10; i++) th.poke();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(runs, 1);
  th.poke();
  th.poke();
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(runs, 1, 'nothing runs while a run is going');
  release();
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(runs, 2, 'the pokes during the run are one run after it');
  release();
  th.poke();
  th.dispose();
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(runs, 2, 'nothing after dispose');
});

test('PortWatch: the first look sends what listens; later looks send only a changed list', async () => {
  let now = [5173];
  const sent: number[][] = [];
  const w = new PortWatch((p) => sent.push(p), { read: async () => now, intervalMs: 10, settleMs: 1 });
  w.start();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent, [[5173]]);
  w.output();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent, [[5173]], 'unchanged: nothing sent');
  now = [5173, 8080];
  w.output();
  await new Promise((r) => setTimeout(r, 20));
  now = [8080];
  w.output();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(sent, [[5173], [5173, 8080], [8080]]);
  w.dispose();
});
