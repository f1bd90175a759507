/**
 * The name a capsule reports (status, capsule.json) when `serve` is given no `--name`. On this machine it is
 * the program's basename (`jackin run` always passes one). In a container it is the container's host name,
 * which Docker and Podman set to the container's short id (the CONTAINER ID column of `docker ps`) unless
 * `--hostname` says otherwise, and Kubernetes to the pod's name: a program name such as `bash` named
 * nothing the operator could find.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { instanceNameProblem } from '../../policy/instance-name.ts';

/** Files the engines create in every container (Docker, Podman). */
const CONTAINER_MARKERS = ['/.dockerenv', '/run/.containerenv'];

export interface NameProbe {
  exists(path: string): boolean;
  hostname(): string;
  env: NodeJS.ProcessEnv;
}

const SYSTEM: NameProbe = { exists: existsSync, hostname, env: process.env };

/** True when this process runs in a Docker or Podman container or a Kubernetes pod. */
export function inContainer(probe: NameProbe = SYSTEM): boolean {
  return CONTAINER_MARKERS.some((p) => probe.exists(p)) || probe.env.KUBERNETES_SERVICE_HOST !== undefined;
}

/** The default instance name for a capsule running `program`. */
export function defaultCapsuleName(program: string, probe: NameProbe = SYSTEM): string {
  // The one rule for names (a program named with a control or bidi character makes no name to print).
  const base = basename(program);
  const fallback = instanceNameProblem(base) === null ? base : 'capsule';
  if (!inContainer(probe)) return fallback;
  const host = probe.hostname();
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(host) ? host : fallback;
}
