/**
 * The host's own record of every host action (a link opened, a file exported, opened or revealed, an
 * image sent, a request refused): one JSON object per line in `$JACKIN_HOME/log/actions.jsonl`. It lives
 * outside every run directory (`$JACKIN_HOME/sockets/<instance>/`, the one directory a container sees), so
 * nothing in a container can read, rewrite or truncate it. The file is created 0600 in a 0700 directory and
 * only ever opened with O_APPEND (one write() per record, so records from several jackin processes never
 * interleave) and O_NOFOLLOW (a symlink planted in its place is refused, not followed).
 */
import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoOf } from '../../errors.ts';
import { inertText, padColumns, textWidth } from '../../ui/inert-text.ts';

/** What happened to the request. */
export type ActionResult = 'ok' | 'refused' | 'failed' | 'cancelled';

export interface ActionRecord {
  /** ISO 8601, UTC. */
  readonly time: string;
  readonly instance: string;
  /** `open-url`, `export`, `open-file`, `reveal-file`, `paste-image`, `stage-file`, `copy`... */
  readonly action: string;
  /** What it acted on: a URL (query elided), a container path, a host path. */
  readonly target: string;
  readonly result: ActionResult;
  /** Why, or where the result went (an error code and message, a published path). */
  readonly detail?: string;
}

/** Longest target and detail kept in a record; a record then always fits one atomic append. */
const MAX_TARGET_CHARS = 1024;
const MAX_DETAIL_CHARS = 1024;
/** Records `jackin log` shows unless told otherwise. */
export const DEFAULT_SHOWN_RECORDS = 50;

export function actionLogPath(home: string): string {
  return join(home, 'log', 'actions.jsonl');
}

const RESULTS: ReadonlySet<string> = new Set<ActionResult>(['ok', 'refused', 'failed', 'cancelled']);

/** Appends one record. Never throws: a host action must not fail because its log could not be written. */
export async function appendAction(home: string, r: Omit<ActionRecord, 'time'> & { time?: string }): Promise<boolean> {
  const record: ActionRecord = {
    time: r.time ?? new Date().toISOString(),
    instance: r.instance.slice(0, 128),
    action: r.action.slice(0, 64),
    target: r.target.slice(0, MAX_TARGET_CHARS),
    result: r.result,
    ...(r.detail !== undefined ? { detail: r.detail.slice(0, MAX_DETAIL_CHARS) } : {}),
  };
  try {
    await mkdir(join(home, 'log'), { recursive: true, mode: 0o700 });
    const h = await open(actionLogPath(home), constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    try {
      await h.write(`${JSON.stringify(record)}\n`);
    } finally {
      await h.close();
    }
    return true;
  } catch {
    return false;
  }
}

function asRecord(v: unknown): ActionRecord | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const s = (k: string): string | null => (typeof o[k] === 'string' ? (o[k] as string) : null);
  const [time, instance, action, target, result] = [s('time'), s('instance'), s('action'), s('target'), s('result')];
  if (time === null || instance === null || action === null || target === null || result === null || !RESULTS.has(result)) return null;
  // Shown as it is (formatActions): a timestamp's characters only.
  if (!/^[0-9][0-9T:.+-]{0,38}Z?$/.test(time)) return null;
  const detail = s('detail');
  return { time, instance, action, target, result: result as ActionResult, ...(detail !== null ? { detail } : {}) };
}

/** The records in the log, oldest first, for `instance` only when given; malformed lines are skipped. */
export async function readActions(home: string, instance?: string): Promise<ActionRecord[]> {
  let text: string;
  try {
    text = await readFile(actionLogPath(home), { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return [];
    throw e;
  }
  return parseActions(text, instance);
}

/**
 * Records from JSON lines (the log's own, or another machine's `jackin log --json`), each re-checked field by
 * field; malformed lines are skipped.
 */
export function parseActions(text: string, instance?: string): ActionRecord[] {
  const out: ActionRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const r = asRecord(parsed);
    if (r !== null && (instance === undefined || r.instance === instance)) out.push(r);
  }
  return out;
}

/** A table for people: time, instance, action, result, target, detail; every field inert. */
export function formatActions(records: readonly ActionRecord[]): string {
  if (records.length === 0) return 'no host actions recorded\n';
  const rows = records.map((r) => [
    r.time,
    inertText(r.instance, 32),
    inertText(r.action, 16),
    r.result,
    inertText(r.target, 120),
    inertText(r.detail ?? '', 200),
  ]);
  const head = ['TIME', 'INSTANCE', 'ACTION', 'RESULT', 'TARGET', 'DETAIL'];
  const all = [head, ...rows];
  const widths = head.map((_, c) => Math.max(...all.map((row) => textWidth(row[c] ?? ''))));
  return `${all
    .map((row) =>
      row
        .map((cell, c) => (c === row.length - 1 ? cell : padColumns(cell, widths[c] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
