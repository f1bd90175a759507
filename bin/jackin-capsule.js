#!/usr/bin/env node
'use strict';
require('./node-version.js')('jackin-capsule');
// `attach-proxy` (one per exec relay) skips the full CLI: see src/cli/attach-proxy-main.ts. CommonJS
// (bin/package.json), so the relay never starts Node's ES module loader; the full CLI loads with its code
// cache (src/cli/code-cache.ts).
const { fastProxySocket, proxyMain } = require('../dist/attach-proxy.bundle.cjs');

const socket = fastProxySocket(process.argv.slice(2));
if (socket !== null) void proxyMain(socket);
else {
  const { join } = require('node:path');
  const { loadWithCodeCache } = require('../dist/code-cache.bundle.cjs');
  const dist = join(__dirname, '..', 'dist');
  loadWithCodeCache(join(dist, 'jackin-capsule.bundle.cjs'), join(dist, 'jackin-capsule.bundle.cache')).exports.main(process.argv);
}
