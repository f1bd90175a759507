#!/usr/bin/env node
// `attach-proxy` (one per exec relay) skips the full CLI: see src/cli/attach-proxy-main.ts.
import { fastProxySocket, proxyMain } from '../dist/cli/attach-proxy-main.js';

const socket = fastProxySocket(process.argv.slice(2));
if (socket !== null) await proxyMain(socket);
else await (await import('../dist/cli/jackin-capsule.js')).main(process.argv);
