/**
 * Registers the later stages' steps into the workspace lifecycle (create and remove hooks).
 * Imported once by the CLI entry point and the library index, so every caller gets the same
 * behaviour. Each feature adds one line here.
 */
import './land/register.js';
import './audit/register.js';
import './run/lifecycle.js';
import './run/audit-ports.js';
// Last: its release hook unmounts copy-on-write layers, after teardown commands that may need them.
import './provision/register.js';
