'use strict';
// The Node version check both binaries run first, before any bundle loads: on a Node older than
// package.json's `engines` (`>=20`: the 20, 22 and 24 lines, and 23 between them), one line naming the
// version needed and how to get it, status 1 (E_NODE_VERSION in docs/errors.md). Written for any Node (no
// syntax newer than ES5), so even a very old one prints the line instead of a SyntaxError. Node 20 stays
// admitted although past its end of life: it is the Node many machines (this project's CI among them)
// ship, and the README's two commands must work there. Directory export uses Node's own zstd where the
// Node has it and a WebAssembly one where not (src/capsule/export/zstd-compressor.ts).
module.exports = function checkNodeVersion(program) {
  var m = /^v(\d+)\./.exec(process.version);
  var major = m ? Number(m[1]) : 0;
  if (major >= 20) return;
  var message =
    'needs Node.js 20 or newer; this is ' +
    process.version +
    ' at ' +
    process.execPath +
    '. Install Node 24 LTS: https://nodejs.org/en/download (or nvm install 24, or a node:24 image)';
  process.stderr.write(program === 'jackin' ? `jackin: ${message} (E_NODE_VERSION)\n` : `${program}: E_NODE_VERSION: ${message}\n`);
  process.exit(1);
};
