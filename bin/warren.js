#!/usr/bin/env node
// The command line: one bundle of dist/ (scripts/bundle.js), loaded as an ES module.
import '../dist/bundle/bin.js';
