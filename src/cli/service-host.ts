import { serviceHostMain } from '../run/service-host.js';

/**
 * The program a sandboxed service's daemon runs (src/run/service-host.ts): bundled as
 * dist/bundle/service-host.js by scripts/bundle.js. Its stderr is the service's log.
 */
const code = await serviceHostMain(process.argv.slice(2), (line) => process.stderr.write(`warren: ${line}\n`));
process.exit(code);
