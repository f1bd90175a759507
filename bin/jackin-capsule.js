#!/usr/bin/env node
'use strict';
// `attach-proxy` (one per exec relay) skips the full CLI: see src/cli/attach-proxy-main.ts. CommonJS
// (bin/package.json), so the relay never starts Node's ES module loader.
const { fastProxySocket, proxyMain } = require('../dist/attach-proxy.bundle.cjs');

const socket = fastProxySocket(process.argv.slice(2));
if (socket !== null) void proxyMain(socket);
else import('../dist/jackin-capsule.bundle.js').then(({ main }) => main(process.argv));
