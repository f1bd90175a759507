/**
 * Live forwards, for `jackin ls`: each forward writes `$JACKIN_HOME/forwards/<pid>-<port>.json` (0600, in a
 * 0700 directory) while it listens and removes it when it closes; a record whose process is gone is stale
 * and is removed by the next listing.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const FORWARD_KINDS = ['forward', 'login', 'offer'] as const;
type ForwardKind = (typeof FORWARD_KINDS)[number];

export interface ForwardRecord {
  readonly instance: string;
  readonly hostPort: number;
  readonly containerPort: number;
  /** `forward` (jackin forward), `login` (a login link's callback) or `offer` (a port the container opened, forwarded from the palette). */
  readonly kind: ForwardKind;
  readonly pid: number;
  readonly startedAt: string;
}

function dir(home: string): string {
  return join(home, 'forwards');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Records a live forward; returns the function that removes the record (idempotent, never throws). */
export async function recordForward(home: string, r: Omit<ForwardRecord, 'pid' | 'startedAt'>): Promise<() => Promise<void>> {
  await mkdir(dir(home), { recursive: true, mode: 0o700 });
  const file = join(dir(home), `${process.pid}-${r.hostPort}.json`);
  const record: ForwardRecord = { ...r, pid: process.pid, startedAt: new Date().toISOString() };
  await writeFile(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  return () => rm(file, { force: true }).catch(() => {});
}

function isRecord(v: unknown): v is ForwardRecord {
  const r = v as Record<string, unknown> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r['instance'] === 'string' &&
    Number.isInteger(r['hostPort']) &&
    Number.isInteger(r['containerPort']) &&
    (FORWARD_KINDS as readonly unknown[]).includes(r['kind']) &&
    Number.isInteger(r['pid']) &&
    typeof r['startedAt'] === 'string'
  );
}

/** The forwards whose process still runs, by instance and host port; stale records are removed. */
export async function liveForwards(home: string): Promise<ForwardRecord[]> {
  let names: string[];
  try {
    names = await readdir(dir(home));
  } catch {
    return [];
  }
  const out: ForwardRecord[] = [];
  for (const name of names.filter((n) => /^\d+-\d+\.json$/.test(n))) {
    const file = join(dir(home), name);
    let r: unknown;
    try {
      r = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      continue;
    }
    if (!isRecord(r)) continue;
    if (alive(r.pid)) out.push(r);
    else await rm(file, { force: true }).catch(() => {});
  }
  return out.sort((a, b) => a.instance.localeCompare(b.instance) || a.hostPort - b.hostPort);
}
