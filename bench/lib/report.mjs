// Writes bench/RESULTS.md: a header saying when, where and how, then one section per benchmark.
import { writeFileSync } from 'node:fs';
import { describeMachine } from './machine.mjs';

export function writeReport(path, { command, started, sections }) {
  const body = [
    '# Benchmark results',
    '',
    `- Date: ${started.toISOString()}`,
    `- Machine: ${describeMachine()}`,
    `- Command: \`${command}\``,
    '',
    'Every figure is measured in the same run as its baselines. Regenerate with the command above.',
    '',
  ];
  for (const s of sections) {
    body.push(`## ${s.title}`, '', s.markdown, '');
  }
  writeFileSync(path, `${body.join('\n').trimEnd()}\n`);
}
