/**
 * Registers the later stages' steps into the workspace lifecycle (create and remove hooks).
 * Imported once by the CLI entry point and the library index, so every caller gets the same
 * behaviour. Each feature adds one line here.
 */
import './provision/register.js';
