/**
 * The package's root directory (where package.json, policies/, native/ and bin/ are), for every module that
 * needs a file shipped beside the code. It is resolved from this module's own URL, one level below the
 * root in each layout: src/package-root.ts (tsx), dist/package-root.js (tsc) and the bundles the binaries
 * run, dist/<name>.bundle.cjs, where every module shares the bundle's URL (made from __filename). So a
 * module never resolves a package file from its own `import.meta.url` (test/bundle.test.ts checks that).
 */
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));
