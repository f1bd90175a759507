#!/usr/bin/env node
import { main } from '../dist/cli/jackin-capsule.js';
main(process.argv);
