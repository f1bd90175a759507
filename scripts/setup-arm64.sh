#!/usr/bin/env bash
# Host set-up for the arm64 tests on an x64 machine (test/runtime-arm64-e2e.test.ts): arm64 containers run
# under qemu user emulation, and their image is built from Debian's arm64 packages with no registry.
# Idempotent: safe to run again. Run as root after `apt-get install qemu-user-static`. What it does:
#
# 1. Registers Debian's qemu-aarch64 with binfmt_misc, with the F (fix-binary) flag: the kernel opens the
#    interpreter once, here, so an arm64 program starts inside any container, whose root has no qemu.
#    Debian's package only ships the registration (/usr/lib/binfmt.d/qemu-aarch64.conf, for
#    systemd-binfmt, and /usr/share/binfmts/qemu-aarch64, for binfmt-support's update-binfmts); these
#    machines run neither, so nothing registers it. This writes that same line to the kernel.
# 2. Adds arm64 as a dpkg foreign architecture (apt then lists arm64 packages) and downloads the .debs the
#    arm64 test image is made of into a cache this script owns (test/helpers/podman-image.mjs reads it):
#    /var/cache/jackin-bridge/arm64-debs. Nothing is installed for arm64 on the host.
set -euo pipefail

say() { echo "setup-arm64: $*" >&2; }

# 1. binfmt_misc: qemu-aarch64 with the F flag.
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
if [ ! -r "$conf" ]; then
  say "$conf is missing: apt-get install qemu-user-static"
  exit 1
fi
binfmt=/proc/sys/fs/binfmt_misc
if ! mountpoint -q "$binfmt"; then
  mount -t binfmt_misc binfmt_misc "$binfmt"
fi
# The line is :name:type:offset:magic:mask:interpreter:flags; Debian's flags are OPF, and F must be there.
line=$(grep -m 1 '^:qemu-aarch64:' "$conf")
interpreter=$(printf '%s' "$line" | cut -d: -f7)
flags=$(printf '%s' "$line" | cut -d: -f8)
case "$flags" in *F*) ;; *) line="$line"F ;; esac
entry="$binfmt/qemu-aarch64"
registered_ok() {
  [ -r "$entry" ] && grep -qx enabled "$entry" && grep -qx "interpreter $interpreter" "$entry" &&
    grep -q '^flags: .*F' "$entry"
}
if ! registered_ok; then
  # A registration without F (or of another interpreter) is replaced: the kernel keeps one per name.
  if [ -e "$entry" ]; then echo -1 > "$entry"; fi
  printf '%s' "$line" > "$binfmt/register"
fi
if ! registered_ok; then
  say "qemu-aarch64 did not register: $(cat "$entry" 2>&1 | tr '\n' ' ')"
  exit 1
fi

# 2. The arm64 image's packages, cached. Listed in test/helpers/podman-image.mjs (ARM64_PACKAGES) too.
packages=(busybox-static libc6 libstdc++6 libgcc-s1)
cache=/var/cache/jackin-bridge/arm64-debs
complete() {
  local p n
  for p in "${packages[@]}"; do
    n=$(find "$cache" -maxdepth 1 -name "${p}_*_arm64.deb" 2>/dev/null | wc -l)
    [ "$n" = 1 ] || return 1
  done
}
if ! complete; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    apt-get update
  fi
  mkdir -p "$(dirname "$cache")"
  fresh=$(mktemp -d "$cache.new.XXXXXX")
  # Root downloads into a directory _apt cannot write: say so to apt rather than read its warning. Lists
  # older than the arm64 architecture (added by hand, never updated) know no arm64 package: update once.
  download() { (cd "$fresh" && apt-get download -o APT::Sandbox::User=root "${packages[@]/%/:arm64}"); }
  if ! download; then
    apt-get update
    download
  fi
  chmod 755 "$fresh"
  rm -rf "$cache"
  mv "$fresh" "$cache"
  complete || { say "$cache is incomplete after the download"; exit 1; }
fi

say "ok (qemu-aarch64 registered with flags $(sed -n 's/^flags: //p' "$entry"); arm64 packages in $cache)"
