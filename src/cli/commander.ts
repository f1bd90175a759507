/**
 * commander, loaded with require(). It is a CommonJS package: importing it through Node's ESM loader also
 * parses its source for export names (cjs-module-lexer), measured at about 10 ms of every `jackin` and
 * `jackin-capsule` start-up. The commands import it from here; its types come from the package as usual.
 */
import { createRequire } from 'node:module';
import type * as Commander from 'commander';

const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, CommanderError, InvalidArgumentError, Option } = commander;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type InvalidArgumentError = Commander.InvalidArgumentError;
export type Option = Commander.Option;
