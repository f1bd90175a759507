#!/usr/bin/env bash
# Host settings Podman needs on the CI machines (Debian 12 VMs with a hybrid cgroup v1/v2 mount, root
# without CAP_SYS_RESOURCE). Idempotent: safe to run again. Run as root after
# `apt-get install podman crun catatonit`. Measured recipe and reasons: see docs/guide.md ("Testing with
# Podman") and the comments below.
set -euo pipefail

# 1. crun refuses a hybrid cgroup layout while the v2 hierarchy holds any controller ("cgroups in hybrid
#    mode not supported, drop all controllers from cgroupv2"). Mounting each controller still listed there
#    as its own v1 hierarchy moves it out of v2. This cannot be undone without a reboot.
unified=/sys/fs/cgroup/unified/cgroup.controllers
if [ -r "$unified" ]; then
  for controller in $(cat "$unified"); do
    case "$controller" in *[!a-z_]*) echo "setup-podman: unexpected controller name '$controller'" >&2; exit 1 ;; esac
    dir="/sys/fs/cgroup/$controller"
    if ! mountpoint -q "$dir"; then
      mkdir -p "$dir"
      mount -t cgroup -o "$controller" cgroup "$dir"
    fi
  done
  if [ -n "$(cat "$unified")" ]; then
    echo "setup-podman: $unified still lists: $(cat "$unified")" >&2
    exit 1
  fi
fi

# 2. Root here cannot raise RLIMIT_NOFILE/NPROC to podman's defaults (1048576), so every `podman run`
#    fails with "setrlimit ... Operation not permitted". nproc above 32768 fails too.
conf_dir=/etc/containers/containers.conf.d
conf="$conf_dir/50-jackin-ci.conf"
mkdir -p "$conf_dir"
want='[containers]
default_ulimits = ["nofile=8192:8192", "nproc=4096:4096"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"'
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
  printf '%s\n' "$want" > "$conf"
fi

if ! out=$(podman info --format '{{.Host.CgroupManager}}' 2>&1); then
  echo "setup-podman: podman does not work yet: $out" >&2
  exit 1
fi
echo "setup-podman: ok ($(podman --version), cgroup manager $out)"
