/**
 * Removes a container `jackin run --image` started once its program has ended, whichever host process is
 * attached then, or none: the `jackin` that started it may have been detached long before, and a later
 * `jackin attach` or nothing at all may be there when the program exits. Without it the container stayed
 * `Exited`, hidden from `jackin ls` (its capsule removed the socket), until someone ran `ENGINE rm`.
 *
 * Not `ENGINE run --rm`: a container whose capsule fails to start would be gone, with its log, before
 * jackin could read why. The reaper starts once the capsule answers: a small `sh` that waits for the
 * container (its first process, then `ENGINE wait`), gives the attached `jackin` a moment to read the exit code, then removes it if
 * it is still ours (the label) and stopped (`rm` without -f refuses a running one: a new container of the
 * same name is never touched), and its record with it.
 */
import { spawn } from 'node:child_process';
import { CONTAINER_LABEL } from './container-run-argv.ts';
import type { ContainerEngine } from '../../transport/container-engine.ts';
import { containerRecordPath } from '../../transport/container-record.ts';

/** Seconds the reaper leaves an exited container for the attached jackin to read its state and exit code. */
const REAP_GRACE_SECONDS = 3;

/** Seconds between two looks of `tail --pid` at the container's first process. */
const PID_CHECK_SECONDS = 2;

/**
 * The reaper's script: $1 engine, $2 container, $3 label key, $4 record path, $5 grace in seconds, $6 seconds
 * between looks at the container's process; no value is put into the text.
 * An idle wait costs nothing measurable: `podman wait` polls (measured: 250 to 400 wake-ups in 3 s of its Go
 * runtime), so where the container's first process is one of this kernel's in another PID namespace (a
 * container on this host, not in a VM), GNU `tail --pid` watches it first, one look every $6 seconds; the
 * engine's `wait` then returns at once. Without it (another tail, no /proc, a VM), `wait` alone.
 * `wait` can return with the container still running (the engine's daemon restarted): it waits again then.
 */
const REAPER_SCRIPT = [
  'while :; do',
  '  pid=$("$1" inspect --type container --format "{{.State.Pid}}" "$2" 2>/dev/null) || pid=',
  '  case $pid in',
  "    ''|0|*[!0-9]*) ;;",
  '    *) [ -e "/proc/$pid/ns/pid" ] && [ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&',
  '       tail --pid="$pid" -s "$6" -f /dev/null >/dev/null 2>&1 ;;',
  '  esac',
  '  "$1" wait "$2" >/dev/null 2>&1',
  '  sleep "$5"',
  '  state=$("$1" inspect --type container --format "{{.State.Status}}" "$2" 2>/dev/null) || exit 0',
  '  [ "$state" = running ] || [ "$state" = paused ] || break',
  'done',
  'label=$("$1" inspect --type container --format "{{index .Config.Labels \\"$3\\"}}" "$2" 2>/dev/null) || exit 0',
  '[ "$label" = "$2" ] || exit 0',
  '"$1" rm "$2" >/dev/null 2>&1 && rm -f "$4"',
].join('\n');

/** The argv of the reaper for a container (exported for its test). */
export function reaperArgv(engine: ContainerEngine, container: string, recordPath: string, graceSeconds = REAP_GRACE_SECONDS): string[] {
  return ['sh', '-c', REAPER_SCRIPT, 'jackin-reaper', engine, container, CONTAINER_LABEL, recordPath, String(graceSeconds), String(PID_CHECK_SECONDS)];
}

/** Starts the reaper, detached from this process (it outlives a detach), with no output. */
export function startContainerReaper(engine: ContainerEngine, container: string, home: string, name: string): void {
  const [cmd, ...args] = reaperArgv(engine, container, containerRecordPath(home, name));
  const child = spawn(cmd!, args, { detached: true, stdio: 'ignore' });
  child.on('error', () => undefined); // no sh: the container stays until `jackin prune`
  child.unref();
}
