/**
 * commander, for the commands. scripts/bundle.mjs bundles it into both CLIs' bundles, so it loads with their
 * code cache (src/cli/code-cache.ts) instead of from node_modules: `require('commander')` alone took 10 to
 * 18 ms here.
 */
export { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
