#!/usr/bin/env node
'use strict';
// CommonJS (bin/package.json), so `jackin attach NAME --via ENGINE` starts its relay before any ES module
// loads, and the CLI loads while it starts: see src/cli/early-relay.ts.
const { startEarlyRelay } = require('../dist/early-relay.bundle.cjs');

const earlyRelay = startEarlyRelay(process.argv.slice(2));
import('../dist/jackin.bundle.js').then(({ main }) => main(process.argv, earlyRelay));
