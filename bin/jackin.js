#!/usr/bin/env node
'use strict';
require('./node-version.js')('jackin');
// CommonJS (bin/package.json), so `jackin attach NAME --via ENGINE` starts its relay before the CLI loads
// (src/cli/early-relay.ts), and the CLI loads with its code cache (src/cli/code-cache.ts).
const { join } = require('node:path');
const { startEarlyRelay } = require('../dist/early-relay.bundle.cjs');

const earlyRelay = startEarlyRelay(process.argv.slice(2));
const { loadWithCodeCache } = require('../dist/code-cache.bundle.cjs');
const dist = join(__dirname, '..', 'dist');
const { main } = loadWithCodeCache(join(dist, 'jackin.bundle.cjs'), join(dist, 'jackin.bundle.cache')).exports;
main(process.argv, earlyRelay);
