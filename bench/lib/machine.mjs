import { cpus, release, platform, totalmem } from 'node:os';

/** One line describing where the numbers were measured. */
export function describeMachine() {
  const c = cpus();
  const model = c[0]?.model?.trim() ?? 'unknown CPU';
  return `${platform()} ${release()}, ${c.length} CPUs (${model}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
}
