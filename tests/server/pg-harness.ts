/**
 * PostgreSQL and Redis for the scale-out tests: they run when WSYNC_TEST_DATABASE_URL /
 * WSYNC_TEST_REDIS_URL are set (CI sets both), and otherwise say plainly that they did not run.
 */
import { test } from "bun:test";
import { SQL } from "bun";

export const PG_URL = process.env.WSYNC_TEST_DATABASE_URL;
export const REDIS_URL = process.env.WSYNC_TEST_REDIS_URL;

/** Registers one passing test that says why the file's real tests did not run. */
export function notRun(what: string, variable: string): void {
  test(`${what}: not run (set ${variable})`, () => {
    console.log(`${what} not run: set ${variable}`);
  });
}

let admin: SQL | null = null;
const created = new Set<string>();

/** A new, empty database on the test server; `drop` removes it (also done by `dropAll`). */
export async function newDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  if (!PG_URL) throw new Error("WSYNC_TEST_DATABASE_URL is not set");
  admin ??= new SQL(PG_URL, { max: 1 });
  const name = `wsync_t_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  created.add(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await admin?.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      created.delete(name);
    },
  };
}

export async function dropAll(): Promise<void> {
  if (!PG_URL || created.size === 0) return;
  // A new connection: a test may have restarted PostgreSQL under the old one.
  await admin?.close().catch(() => undefined);
  admin = new SQL(PG_URL, { max: 1 });
  for (const name of [...created]) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  created.clear();
  await admin.close();
  admin = null;
}
