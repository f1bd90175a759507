/**
 * What `jackin run --image` started: `$JACKIN_HOME/containers/<name>.json` holds the engine and container
 * name, so `jackin stop`, `attach`, `export` and `ls` reach that container by the instance name. It lives
 * outside the run directory on purpose: the run directory is bind-mounted into the container, which may
 * write anything there, and the engine and name we later run commands with must not come from it.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkInstanceName } from './instance-paths.ts';
import { CONTAINER_ENGINES, type ContainerEngine } from './container-engine.ts';

export interface ContainerRecord {
  engine: ContainerEngine;
  container: string;
  image: string;
}

/** $JACKIN_HOME/containers/<name>.json. */
export function containerRecordPath(home: string, name: string): string {
  return join(home, 'containers', `${checkInstanceName(name)}.json`);
}

export function writeContainerRecord(home: string, name: string, record: ContainerRecord): void {
  mkdirSync(join(home, 'containers'), { recursive: true, mode: 0o700 });
  writeFileSync(containerRecordPath(home, name), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/** The record of `name`, or null when there is none (or it is not one we wrote). */
export function readContainerRecord(home: string, name: string): ContainerRecord | null {
  try {
    const v = JSON.parse(readFileSync(containerRecordPath(home, name), 'utf8')) as Partial<ContainerRecord>;
    if (!CONTAINER_ENGINES.includes(v.engine as ContainerEngine) || typeof v.container !== 'string' || typeof v.image !== 'string') return null;
    return { engine: v.engine as ContainerEngine, container: v.container, image: v.image };
  } catch {
    return null;
  }
}

export function removeContainerRecord(home: string, name: string): void {
  rmSync(containerRecordPath(home, name), { force: true });
}

/** The instance names that have a record (files named <name>.json), sorted. */
export function containerRecordNames(home: string): string[] {
  try {
    return readdirSync(join(home, 'containers'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch {
    return [];
  }
}
