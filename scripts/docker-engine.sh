#!/usr/bin/env bash
# Starts or stops a real Docker engine (Debian's docker.io: containerd, then dockerd) on machines without
# systemd, as the tests need it. Run as root. Measured recipe: docs/guide.md ("Testing with Docker").
#
#   scripts/docker-engine.sh start   # prints "started" (this call started it) or "running" (it already answered)
#   scripts/docker-engine.sh stop    # stops only what `start` started, by the pids it recorded
#   scripts/docker-engine.sh status  # exit 0 when the engine answers
#
# Idempotent: `start` on an engine that answers changes nothing; `stop` with nothing recorded changes nothing.
# The host's network is never touched: dockerd runs with --iptables=false --ip-forward=false
# --ip-masq=false --bridge=none (containers then have only `lo`; --network none and host work).
set -euo pipefail

STATE=${JACKIN_DOCKER_STATE:-/run/jackin-docker-engine}
CONTAINERD_SOCK=/run/containerd/containerd.sock
START_TIMEOUT_S=${JACKIN_DOCKER_START_TIMEOUT_S:-60}
STOP_TIMEOUT_S=20

say() { echo "docker-engine: $*" >&2; }

docker_answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
containerd_answers() { timeout 5 ctr --connect-timeout 1s --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; }

# Waits up to $1 seconds for the command in "$@" (after the first) to succeed.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      say "$what did not answer within ${limit}s"
      return 1
    fi
    sleep 0.1
  done
}

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# TERMs the process whose pid is recorded in $1, waits for it to exit (KILL after STOP_TIMEOUT_S).
stop_recorded() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  case "$pid" in '' | *[!0-9]*) say "bad pid in $file: '$pid'"; rm -f "$file"; return 1 ;; esac
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + STOP_TIMEOUT_S))
    while alive "$pid"; do
      if ((SECONDS >= deadline)); then
        say "pid $pid did not exit on TERM within ${STOP_TIMEOUT_S}s: KILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.5
        break
      fi
      sleep 0.1
    done
  fi
  rm -f "$file"
}

cleanup_docker_files() {
  rm -f /var/run/docker.sock /var/run/docker.pid
  if mountpoint -q /run/docker/netns/default 2>/dev/null; then umount /run/docker/netns/default || true; fi
  rm -rf /run/docker
}

start() {
  if docker_answers; then
    echo running
    return 0
  fi
  for tool in containerd dockerd ctr docker; do
    command -v "$tool" >/dev/null || { say "$tool is not installed: apt-get install -y --no-install-recommends docker.io"; exit 1; }
  done
  mkdir -p "$STATE"
  # The cgroup setting Podman needs is needed by runc too (and is idempotent).
  "$(dirname "$0")/setup-podman.sh" >/dev/null
  # A dockerd or containerd of an earlier start that died half-way: stop it first.
  stop_recorded "$STATE/dockerd.pid"
  if ! containerd_answers; then
    stop_recorded "$STATE/containerd.pid"
    setsid /usr/bin/containerd >"$STATE/containerd.log" 2>&1 </dev/null &
    echo $! >"$STATE/containerd.pid"
    wait_for "$START_TIMEOUT_S" containerd containerd_answers || { tail -5 "$STATE/containerd.log" >&2; stop; exit 1; }
  fi
  setsid dockerd --containerd="$CONTAINERD_SOCK" --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    --storage-driver=overlay2 >"$STATE/dockerd.log" 2>&1 </dev/null &
  echo $! >"$STATE/dockerd.pid"
  wait_for "$START_TIMEOUT_S" dockerd docker_answers || { tail -5 "$STATE/dockerd.log" >&2; stop; exit 1; }
  echo started
}

stop() {
  if [ -f "$STATE/dockerd.pid" ]; then
    stop_recorded "$STATE/dockerd.pid"
    cleanup_docker_files
  fi
  if [ -f "$STATE/containerd.pid" ]; then
    stop_recorded "$STATE/containerd.pid"
    rm -rf /run/containerd
  fi
  rm -rf "$STATE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) docker_answers ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
