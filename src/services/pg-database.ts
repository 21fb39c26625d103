import { randomBytes } from 'node:crypto';
import type { Store } from '../state/store.js';
import { WarrenError } from '../errors.js';
import { forgetObject, isRecorded, recordObject } from './ledger.js';
import { endSessionsSql, roleLimitsSql, type RoleLimits } from './pg-limits.js';
import {
  PgError,
  pgDump,
  pgIdent,
  pgLiteral,
  pgLoad,
  pgQuery,
  runRetryingConcurrent,
  withPg,
  type PgConn,
} from './pg-sql.js';
import type { PgServer } from './pg-server.js';

/**
 * A task's database on a PostgreSQL server: `CREATE DATABASE … TEMPLATE` of a template (files
 * copied, no SQL replayed), owned by a role of the task's own that may connect to it alone;
 * dropped with it and checked gone. Every database and role is in the ledger before it exists.
 */

export function serverId(server: Pick<PgServer, 'kind' | 'admin'>): string {
  return server.kind === 'warren' ? 'warren' : `${server.admin.host}:${server.admin.port}`;
}

/** The admin connection to another database of the same server. */
export function onDatabase(server: PgServer, database: string): PgConn {
  return { ...server.admin, database };
}

/** What a task's commands connect with. */
export function roleConn(server: PgServer, role: string, password: string, database: string): PgConn {
  return { host: server.host, port: server.port, user: role, password, database };
}

export async function databaseExists(server: PgServer, name: string): Promise<boolean> {
  return (await pgQuery(server.admin, `SELECT 1 FROM pg_database WHERE datname = ${pgLiteral(name)}`)) === '1';
}

export async function roleExists(server: PgServer, name: string): Promise<boolean> {
  return (await pgQuery(server.admin, `SELECT 1 FROM pg_roles WHERE rolname = ${pgLiteral(name)}`)) === '1';
}

/** The one place warren makes a role: with the server's limits for it (pg-limits.ts). */
function roleSql(name: string, password: string, limits: RoleLimits): string {
  return `DO $$ BEGIN
       IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${pgLiteral(name)}) THEN
         ALTER ROLE ${pgIdent(name)} WITH LOGIN PASSWORD ${pgLiteral(password)} NOSUPERUSER NOCREATEDB NOCREATEROLE;
       ELSE
         CREATE ROLE ${pgIdent(name)} WITH LOGIN PASSWORD ${pgLiteral(password)} NOSUPERUSER NOCREATEDB NOCREATEROLE;
       END IF;
       ${roleLimitsSql(name, limits)}
     END $$;`;
}

// ─── Templates ──────────────────────────────────────────────────────────────────────────────

const COMPLETE = 'warren template, complete: ';

/** True when the template of this seed key was built to the end. */
export async function templateComplete(server: PgServer, name: string, seedKey: string): Promise<boolean> {
  const comment = await pgQuery(
    server.admin,
    `SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = ${pgLiteral(name)}`,
  );
  return comment === `${COMPLETE}${seedKey}`;
}

/**
 * Builds template `name` from nothing: its role and an empty database (owned by the admin role,
 * the seed's objects by the template's role), then `seed` run against it as that role; then it
 * takes no connections (a clone needs none on it) and is marked complete. A half-built one (a
 * crash, a seed that failed) is dropped first.
 */
export async function buildTemplate(
  store: Store,
  project: string,
  server: PgServer,
  name: string,
  seedKey: string,
  seed: (conn: PgConn) => Promise<void>,
): Promise<void> {
  const sid = serverId(server);
  recordObject(store, { server: sid, kind: 'role', name, project, taskId: null });
  recordObject(store, { server: sid, kind: 'database', name, project, taskId: null });
  const password = randomBytes(18).toString('hex');
  await withPg(server.admin, async (admin) => {
    await admin.run(`DROP DATABASE IF EXISTS ${pgIdent(name)} WITH (FORCE)`);
    await admin.run(roleSql(name, password, server.roles));
    await admin.run(`CREATE DATABASE ${pgIdent(name)} TEMPLATE template0`);
  });
  await pgQuery(
    onDatabase(server, name),
    `REVOKE ALL ON DATABASE ${pgIdent(name)} FROM PUBLIC;
     GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${pgIdent(name)} TO ${pgIdent(name)};
     GRANT ALL ON SCHEMA public TO ${pgIdent(name)};`,
  );
  await seed(roleConn(server, name, password, name));
  await pgQuery(
    server.admin,
    `ALTER DATABASE ${pgIdent(name)} WITH ALLOW_CONNECTIONS false;
     COMMENT ON DATABASE ${pgIdent(name)} IS ${pgLiteral(`${COMPLETE}${seedKey}`)};`,
  );
}

/** Drops a template and its role. */
export async function dropTemplate(store: Store, server: PgServer, name: string): Promise<void> {
  await dropObjects(store, server, name);
}

// ─── A task's database ──────────────────────────────────────────────────────────────────────

export interface CloneSpec {
  project: string;
  taskId: string;
  /** The database and its role. */
  name: string;
  password: string;
  /** The database it is a copy of; null: an empty one. */
  template: string | null;
  /** The role that owns the template's objects (a warren template's own), whose objects become the task role's. */
  templateRole: string | null;
}

/**
 * The task's role, then its database as a copy of the template, owned by that role, which
 * alone (with the admin) may connect. Refuses a database or role of that name that warren did
 * not make; one it made (left by a crash) is dropped first.
 */
export async function cloneDatabase(store: Store, server: PgServer, spec: CloneSpec): Promise<void> {
  const sid = serverId(server);
  // One connection for the guard and the creation (CREATE DATABASE cannot run in a transaction
  // block: each statement is sent on its own).
  await withPg(server.admin, async (admin) => {
    // One round trip for what the guard needs: is either name taken, and which server version.
    const [db, role, version] = (
      await admin.run(
        `SELECT (SELECT count(*) FROM pg_database WHERE datname = ${pgLiteral(spec.name)}),
                (SELECT count(*) FROM pg_roles WHERE rolname = ${pgLiteral(spec.name)}),
                current_setting('server_version_num')`,
      )
    ).split('|');
    for (const [kind, exists] of [
      ['database', db === '1'],
      ['role', role === '1'],
    ] as const) {
      if (exists && !isRecorded(store, sid, kind, spec.name)) {
        throw new WarrenError(
          'SERVICE_FAILED',
          `a ${kind} named ${spec.name} exists on the PostgreSQL server and warren did not make it; it was left as it is, and nothing was created.`,
          { hint: `Drop or rename it if it is not needed, then run \`warren new\` again.` },
        );
      }
    }
    recordObject(store, { server: sid, kind: 'role', name: spec.name, project: spec.project, taskId: spec.taskId });
    recordObject(store, { server: sid, kind: 'database', name: spec.name, project: spec.project, taskId: spec.taskId });
    // FILE_COPY (15+) copies the template's files, as CREATE DATABASE always did before 15; the
    // default there (WAL_LOG) writes every block into the WAL.
    const strategy = Number(version) >= 150000 ? ' STRATEGY = FILE_COPY' : '';
    await admin.run(`DROP DATABASE IF EXISTS ${pgIdent(spec.name)} WITH (FORCE)`);
    await admin.run(roleSql(spec.name, spec.password, server.roles));
    await admin.run(
      `CREATE DATABASE ${pgIdent(spec.name)} OWNER ${pgIdent(spec.name)}${spec.template ? ` TEMPLATE ${pgIdent(spec.template)}` : ''}${strategy}`,
      { timeoutMs: 30 * 60_000 },
    );
  });
  const inside = [
    `REVOKE ALL ON DATABASE ${pgIdent(spec.name)} FROM PUBLIC;`,
    `GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${pgIdent(spec.name)} TO ${pgIdent(spec.name)};`,
  ];
  if (spec.templateRole) {
    inside.push(`REASSIGN OWNED BY ${pgIdent(spec.templateRole)} TO ${pgIdent(spec.name)};`);
    inside.push(`DROP OWNED BY ${pgIdent(spec.templateRole)};`);
  } else if (spec.template && spec.template !== 'template0') {
    inside.push(takeOwnership(spec.name));
  }
  // REASSIGN and DROP OWNED act in the database they run in: the task's own, a second connection.
  await withPg(onDatabase(server, spec.name), (db) => runRetryingConcurrent(db, inside.join('\n')));
}

/**
 * A database of the user's (`template:`) holds objects of whatever roles made them: in the
 * task's copy, every schema, table, view, sequence and routine outside the system's and the
 * extensions' becomes the task role's, so that its migrations can alter them.
 */
function takeOwnership(role: string): string {
  const user = pgLiteral(role);
  const mine = (oid: string, catalog: string) =>
    `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${catalog}'::regclass AND d.objid = ${oid} AND d.deptype IN ('e', 'a', 'i'))`;
  const userSchema = "n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'";
  return `DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT n.nspname FROM pg_namespace n WHERE ${userSchema} AND ${mine('n.oid', 'pg_namespace')} LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, ${user});
  END LOOP;
  FOR r IN SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE ${userSchema} AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${mine('c.oid', 'pg_class')} LOOP
    EXECUTE format('ALTER %s %I.%I OWNER TO %I',
      CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
      r.nspname, r.relname, ${user});
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS sig FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE ${userSchema} AND ${mine('p.oid', 'pg_proc')} LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.sig, ${user});
  END LOOP;
END $$;`;
}

/**
 * Drops database and role `name` (its sessions ended first: the role may log in no more, and
 * every session of it is terminated, on any database), checks both are gone, and only then
 * forgets them: a drop that failed leaves the records, for the next `rm` or `gc`.
 */
export async function dropObjects(store: Store, server: PgServer, name: string): Promise<void> {
  // One connection, one statement at a time: DROP DATABASE cannot run in a transaction block.
  const [db, role] = await withPg(server.admin, async (admin) => {
    await admin.run(endSessionsSql(name, { nologin: true }));
    await admin.run(`DROP DATABASE IF EXISTS ${pgIdent(name)} WITH (FORCE)`);
    await admin.run(`DROP ROLE IF EXISTS ${pgIdent(name)}`);
    return (
      await admin.run(
        `SELECT (SELECT count(*) FROM pg_database WHERE datname = ${pgLiteral(name)}),
                (SELECT count(*) FROM pg_roles WHERE rolname = ${pgLiteral(name)})`,
      )
    ).split('|');
  });
  const left = [...(db !== '0' ? [`database ${name}`] : []), ...(role !== '0' ? [`role ${name}`] : [])];
  if (left.length > 0) throw new Error(`${left.join(' and ')} still exist(s) after DROP`);
  const sid = serverId(server);
  forgetObject(store, sid, 'database', name);
  forgetObject(store, sid, 'role', name);
}

/**
 * A plain SQL dump of task database `name`, taken as its own role (`password`, the one warren
 * recorded: set again first, in case the task changed it), never as the admin role: whatever the
 * task's objects make pg_dump run (a table swapped for a view between its reads, CVE-2024-7348)
 * runs with the task's own rights. A dump refused for the role's connection limit (the task's
 * sessions hold every one) ends those sessions and is tried once more: the task is being removed.
 */
export async function dumpDatabase(server: PgServer, name: string, password: string, file: string): Promise<void> {
  await pgQuery(server.admin, `ALTER ROLE ${pgIdent(name)} WITH LOGIN PASSWORD ${pgLiteral(password)}`);
  const conn = roleConn(server, name, password, name);
  try {
    await pgDump(conn, file);
  } catch (err) {
    if (!(err instanceof PgError) || !/too many connections for role/.test(err.message)) throw err;
    await pgQuery(server.admin, endSessionsSql(name, { nologin: false }));
    await pgDump(conn, file);
  }
}

/**
 * Database `name` made empty and owned by its role (as cloneDatabase makes it), then filled from
 * a dump by that role, never by the admin: the dump is the task's data, and whatever it runs — a
 * CHECK, an index expression or a materialized view calling a function of the task's — runs
 * with the task role's rights.
 */
export async function restoreDatabase(
  store: Store,
  server: PgServer,
  spec: Omit<CloneSpec, 'template' | 'templateRole'>,
  dump: string,
): Promise<void> {
  await cloneDatabase(store, server, { ...spec, template: 'template0', templateRole: null });
  await pgLoad(roleConn(server, spec.name, spec.password, spec.name), dump);
}
