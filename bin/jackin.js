#!/usr/bin/env node
import { main } from '../dist/cli/jackin.js';
main(process.argv);
