import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * redis-server's command line for a task's service. Its password is never on it: a command line
 * is every local user's to read (`ps`, /proc/PID/cmdline), of redis-server and of the wrapper
 * and init that start it alike. It goes into `redis.conf` in the service's own folder (0700), a
 * file of mode 0600 written aside and renamed into place, which redis-server reads as its
 * configuration file; the rest is given as options after it, which redis applies on top.
 */

export const REDIS_CONF = 'redis.conf';

/** The configuration file's text: the password alone. Pure. */
export function redisConf(password: string): string {
  // redis takes a word of its config's syntax; warren's passwords are hexadecimal.
  if (!/^[0-9a-f]+$/.test(password)) throw new Error('a redis password of warren is hexadecimal');
  return `# written by warren: this service's password, kept off its command line\nrequirepass ${password}\n`;
}

/** Writes `dir`/redis.conf (0600) and returns the argv that starts redis-server on `port` with it. */
export function redisArgv(binary: string, dir: string, port: number, password: string): string[] {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const conf = path.join(dir, REDIS_CONF);
  const tmp = path.join(dir, `.${REDIS_CONF}.${randomBytes(6).toString('hex')}`);
  try {
    fs.writeFileSync(tmp, redisConf(password), { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, conf);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return [
    binary,
    conf,
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
}
