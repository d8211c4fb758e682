/**
 * PostgreSQL backups as docs/operators.md shows them (issue 34): the block of commands in the guide,
 * run as written (pg_dump, createdb, pg_restore, `wsync restore --check`) with only the database
 * names and the URL of the restored database put in, against a database with accounts, a channel and
 * messages; the check reports the same row counts as the source. A database without wsync's schema
 * fails the check (exit 1). Runs when WSYNC_TEST_DATABASE_URL is set and pg_dump is installed.
 */
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openPostgresStorage } from "../../server/storage/postgres/index.ts";
import { newDatabase, notRun, PG_URL } from "../server/pg-harness.ts";
import { wsync } from "../server/server-process.ts";
import { World } from "../server/storage/fixtures.ts";
import { REPO_ROOT } from "./cli-harness.ts";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
});

const hasPgDump =
  Bun.which("pg_dump") !== null && Bun.which("pg_restore") !== null && Bun.which("createdb") !== null;

/** The guide's PostgreSQL backup block (the first ```sh block after its heading). */
function guideBlock(): string {
  const guide = readFileSync(join(REPO_ROOT, "docs/operators.md"), "utf8");
  const at = guide.indexOf("### PostgreSQL: `pg_dump`, `pg_restore`, `wsync restore --check`");
  const block = /```sh\n([\s\S]*?)```/.exec(guide.slice(at));
  if (at < 0 || !block?.[1]) throw new Error("the guide's PostgreSQL block was not found");
  return block[1];
}

if (!PG_URL) notRun("pg_dump / pg_restore / wsync restore --check", "WSYNC_TEST_DATABASE_URL");
else if (!hasPgDump)
  notRun("pg_dump / pg_restore / wsync restore --check", "PATH (install postgresql-client)");
else
  test("the guide's pg_dump, createdb, pg_restore and wsync restore --check, as written", async () => {
    // A source database with rows in it.
    const source = await newDatabase();
    cleanups.push(() => source.drop());
    const storage = await openPostgresStorage({ url: source.url, max: 2 });
    const w = new World(storage);
    const { owner, channel, epochId } = await w.room();
    for (let i = 0; i < 5; i++) await w.message(channel, owner, epochId);
    await storage.close();

    const work = mkdtempSync(join(tmpdir(), "wsync-pgdump-"));
    cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
    // `wsync` on the PATH, as the guide assumes (the CLI from this checkout).
    const bin = join(work, "bin");
    await Bun.write(
      join(bin, "wsync"),
      `#!/bin/sh\nexec "${process.execPath}" "${join(REPO_ROOT, "cli/main.ts")}" "$@"\n`,
    );
    chmodSync(join(bin, "wsync"), 0o755);

    const restoredName = `wsync_r_${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
    const restoredUrl = new URL(source.url);
    restoredUrl.pathname = `/${restoredName}`;
    cleanups.push(async () => {
      const admin = new SQL(PG_URL as string, { max: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`);
      await admin.close();
    });
    // Only the names change: the database's, and the restored URL the guide spells for its example.
    const script = guideBlock()
      .replaceAll("wsync_restored", restoredName)
      .replace(/^RESTORED=.*$/m, `RESTORED=${restoredUrl.toString()}`);
    expect(script).toContain('pg_restore --no-owner --dbname="$RESTORED" wsync.dump');
    writeFileSync(join(work, "steps.sh"), `set -e\n${script}`);
    const run = Bun.spawn(["sh", join(work, "steps.sh")], {
      cwd: work,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, WSYNC_DATABASE_URL: source.url },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(run.stdout).text(),
      new Response(run.stderr).text(),
      run.exited,
    ]);
    if (code !== 0) throw new Error(`the guide's commands failed (exit ${code}): ${err}`);
    expect(out).toContain("looks like a complete wsync database");

    // The same check as JSON: the restored counts are the source's.
    const check = await wsync(["restore", "--check", "--json"], {
      WSYNC_DATABASE_URL: restoredUrl.toString(),
    });
    expect(check.code).toBe(0);
    const report = JSON.parse(check.stdout) as { counts: Record<string, number>; schemaVersion: number };
    expect(report.counts).toMatchObject({ accounts: 2, channels: 1, members: 2, epochs: 1, timeline: 5 });

    // A database without wsync's schema fails the check.
    const empty = await newDatabase();
    cleanups.push(() => empty.drop());
    const bad = await wsync(["restore", "--check"], { WSYNC_DATABASE_URL: empty.url });
    expect(bad.code).toBe(1);
  }, 120_000);
