#!/usr/bin/env node
// The bundle (scripts/bundle.js) starts in a fraction of the time the module graph takes.
import '../dist/bundle/bin.js';
