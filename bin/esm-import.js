'use strict';
// import() on behalf of code Node did not load as a module: the CLIs' bundles are compiled through vm.Script
// to use their code cache (src/cli/code-cache.ts), and import() there is refused. Not a binary: a helper the
// bundle requires (src/host/platform/opener.ts loads the ES-only `open` package through it).
module.exports = (specifier) => import(specifier);
