/**
 * What the guide's examples are written for: the host's loader and the libraries its Node and the PTY
 * binary need, where Debian 12 on x86_64 keeps them (what `jackin run --image` lends there,
 * src/host/instances/host-libraries.ts). The recipe tests build the guide's blocks from it.
 */
import type { LentFile } from '../../src/host/instances/host-libraries.ts';

export const DEBIAN_LIBRARIES: readonly LentFile[] = [
  { name: 'ld.so', path: '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2' },
  { name: 'libc.so.6', path: '/usr/lib/x86_64-linux-gnu/libc.so.6' },
  { name: 'libdl.so.2', path: '/usr/lib/x86_64-linux-gnu/libdl.so.2' },
  { name: 'libgcc_s.so.1', path: '/usr/lib/x86_64-linux-gnu/libgcc_s.so.1' },
  { name: 'libm.so.6', path: '/usr/lib/x86_64-linux-gnu/libm.so.6' },
  { name: 'libpthread.so.0', path: '/usr/lib/x86_64-linux-gnu/libpthread.so.0' },
  { name: 'libstdc++.so.6', path: '/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30' },
  { name: 'libutil.so.1', path: '/usr/lib/x86_64-linux-gnu/libutil.so.1' },
];

/** The capsule `jackin run --image` lends on that host: Debian's Node and jackin package, and those libraries. */
export const REFERENCE_CAPSULE = {
  kind: 'host',
  node: '/usr/bin/node',
  packageRoot: '/usr/lib/node_modules/jackin-bridge',
  imagePath: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  libraries: DEBIAN_LIBRARIES,
} as const;
