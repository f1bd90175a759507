#!/usr/bin/env bash
# Starts or stops a real Docker engine (Debian's docker.io: containerd, then dockerd) on machines without
# systemd, as the tests need it. Run as root. Measured recipe: docs/guide.md ("Testing with Docker").
#
#   scripts/docker-engine.sh start   # prints "started" (this call started it), "shared" (a start of this
#                                    # script runs it: now used by us too) or "running" (an engine not
#                                    # started here answers: left alone)
#   scripts/docker-engine.sh stop    # after "started" or "shared": this user is done; the engine that
#                                    # `start` started is stopped, by the pids it recorded, once no user
#                                    # is left
#   scripts/docker-engine.sh status  # exit 0 when the engine answers
#
# A user is $JACKIN_DOCKER_USER (default: the caller's pid), so test runs side by side share one engine
# and the last one out stops it; a user whose process is gone no longer counts. Start and stop take a
# lock, so two runs never start two engines. Idempotent: `start` on an engine that answers changes nothing;
# `stop` with nothing recorded changes nothing.
# The host's network is never touched: dockerd runs with --iptables=false --ip-forward=false
# --ip-masq=false --bridge=none (containers then have only `lo`; --network none and host work).
set -euo pipefail

STATE=${JACKIN_DOCKER_STATE:-/run/jackin-docker-engine}
CONTAINERD_SOCK=/run/containerd/containerd.sock
START_TIMEOUT_S=${JACKIN_DOCKER_START_TIMEOUT_S:-60}
LOCK=/run/jackin-docker-engine.lock
ME=${JACKIN_DOCKER_USER:-$PPID}
case "$ME" in '' | *[!0-9]*) echo "docker-engine: JACKIN_DOCKER_USER must be a pid" >&2; exit 2 ;; esac
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

recorded_alive() { [ -f "$STATE/dockerd.pid" ] && alive "$(cat "$STATE/dockerd.pid")"; }

add_user() { mkdir -p "$STATE/users" && : >"$STATE/users/$ME"; }

# The users whose processes still run (a run killed before its stop does not keep the engine up).
live_users() {
  local f n=0
  for f in "$STATE"/users/*; do
    [ -e "$f" ] || continue
    if alive "$(basename "$f")"; then n=$((n + 1)); else rm -f "$f"; fi
  done
  echo "$n"
}

start() {
  # Started here and still running (answering slowly under load, maybe): shared, never restarted.
  if recorded_alive; then
    add_user
    wait_for "$START_TIMEOUT_S" dockerd docker_answers || exit 1
    echo shared
    return 0
  fi
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
    setsid /usr/bin/containerd >"$STATE/containerd.log" 2>&1 </dev/null 9>&- &
    echo $! >"$STATE/containerd.pid"
    wait_for "$START_TIMEOUT_S" containerd containerd_answers || { tail -5 "$STATE/containerd.log" >&2; stop_engine; exit 1; }
  fi
  setsid dockerd --containerd="$CONTAINERD_SOCK" --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    --storage-driver=overlay2 >"$STATE/dockerd.log" 2>&1 </dev/null 9>&- &
  echo $! >"$STATE/dockerd.pid"
  wait_for "$START_TIMEOUT_S" dockerd docker_answers || { tail -5 "$STATE/dockerd.log" >&2; stop_engine; exit 1; }
  add_user
  echo started
}

stop() {
  rm -f "$STATE/users/$ME"
  if [ -d "$STATE/users" ] && [ "$(live_users)" -gt 0 ]; then
    return 0
  fi
  stop_engine
}

stop_engine() {
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

# The daemons are started with fd 9 closed, so the lock ends with this script.
exec 9>"$LOCK"
case "${1:-}" in
  start) flock 9; start ;;
  stop) flock 9; stop ;;
  status) docker_answers ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
