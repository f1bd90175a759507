'use strict';
// The Node version check both binaries run first, before any bundle loads: on a Node older than
// package.json's `engines` (`^22.15.0 || >=24`: the 22 and 24 LTS lines), one line naming the version
// needed and how to get it, status 1 (E_NODE_VERSION in docs/errors.md). Written for any Node (no syntax
// newer than ES5), so even a very old one prints the line instead of a SyntaxError. 22.15 is the first
// 22 with zstd in node:zlib, which directory export compresses with (src/capsule/export/zstd-compressor.ts).
// Node 23 is refused with 23.0-23.7 in mind: it had no zstd before 23.8, and the line is past its end.
module.exports = function checkNodeVersion(program) {
  var m = /^v(\d+)\.(\d+)\./.exec(process.version);
  var major = m ? Number(m[1]) : 0;
  var minor = m ? Number(m[2]) : 0;
  if ((major === 22 && minor >= 15) || major >= 24) return;
  var message = 'needs Node.js 22.15 or newer, or 24 or newer (the 22 and 24 LTS lines); this is ' + process.version + ' at ' +
    process.execPath + '. Install Node 24 LTS: https://nodejs.org/en/download (or nvm install 24, or a node:24 image)';
  process.stderr.write(program === 'jackin' ? 'jackin: ' + message + ' (E_NODE_VERSION)\n' : program + ': E_NODE_VERSION: ' + message + '\n');
  process.exit(1);
};
