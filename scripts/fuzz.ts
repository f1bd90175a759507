// Long fuzz run of both frame decoders and of the host's terminal filter:
// npm run fuzz [-- --frames N --streams N --seed S]
// Default: a million frames per direction and a million escape streams. Prints counts, time and peak
// memory; exits 1 on a failure.
import { fuzzDirection } from '../test/helpers/frame-fuzz.ts';
import { fuzzTerminalFilter } from '../test/helpers/terminal-fuzz.ts';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const frames = opt('frames', 1_000_000);
const streams = opt('streams', 1_000_000);
const seed = opt('seed', Date.now() & 0x7fffffff);
const root = new URL('..', import.meta.url);
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
const started = Date.now();
for (const direction of ['client', 'server'] as const) {
  const s = fuzzDirection(direction, frames, seed, root);
  console.log(
    `${direction}: ${s.frames} frames, ${s.items} decoded items, ${s.payloadErrors} payload errors, ${s.framingErrors} framing errors, max buffered ${s.maxBuffered} bytes`,
  );
}
const t = fuzzTerminalFilter(streams, seed);
console.log(
  `terminal filter: ${t.streams} streams, ${t.inputBytes} bytes in, ${t.outputBytes} out, ${t.copyOffers} copy offers, ${t.dropped} drops, max held ${t.maxHeld} bytes`,
);
clearInterval(sample);
peak = Math.max(peak, process.memoryUsage().rss);
console.log(`seed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s, peak RSS ${(peak / 1048576).toFixed(0)} MiB`);
