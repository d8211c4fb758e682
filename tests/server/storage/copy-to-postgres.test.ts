/**
 * `wsync migrate --from sqlite:PATH --to postgres://…` on a populated installation: real users,
 * channels, encrypted messages, epochs, sessions, read markers and a key backup made through the CLI;
 * the copy interrupted and resumed; every table counted and checksummed; then a server on PostgreSQL
 * (same JWT secret) serves the same people their history, and they go on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { COPY_TABLES, copySqliteToPostgres } from "../../../server/storage/copy-to-postgres.ts";
import { migrate as migratePostgres } from "../../../server/storage/postgres/migrations.ts";
import {
  Cli,
  type CliUser,
  cleanupTempDirs,
  closedPort,
  LineReader,
  REPO_ROOT,
  registerCli,
  tempDir,
} from "../../cli/cli-harness.ts";
import { dropAll, newDatabase, notRun, PG_URL } from "../pg-harness.ts";

const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");

async function startServer(port: number, env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, "server/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      WSYNC_JWT_SECRET: secret,
      WSYNC_RATE_LIMIT_SCALE: "0",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new LineReader(proc.stdout);
  const err = new LineReader(proc.stderr);
  await out
    .waitFor((l) => l.includes("listening"), 30_000, "the server")
    .catch((e) => {
      throw new Error(`${(e as Error).message}\n${err.lines.join("\n")}`);
    });
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

if (!PG_URL) notRun("wsync migrate (SQLite → PostgreSQL)", "WSYNC_TEST_DATABASE_URL");
else
  describe("wsync migrate", () => {
    const dataDir = tempDir("wsync-migrate-");
    let alice: CliUser;
    let bob: CliUser;
    let room = "";
    const sent: string[] = [];
    // The PostgreSQL server comes back on the same address: the CLI's stored sessions and keys apply.
    let port = 0;

    beforeAll(async () => {
      port = await closedPort();
      const sqlite = await startServer(port, { WSYNC_DATA_DIR: dataDir });
      alice = await registerCli(sqlite.url, "alice");
      bob = await registerCli(sqlite.url, "bob");
      room = (
        await alice.cli.ok(["create", "history", "--type", "invite", "--description", "old times"])
      ).trim();
      await alice.cli.ok(["invite", room, bob.handle]);
      await bob.cli.ok(["join", room]);
      // Enough rows to span several batches of the copy (the test copies 50 at a time).
      for (let i = 0; i < 60; i++) {
        const text = `message ${i}`;
        await (i % 2 ? bob : alice).cli.ok(["send", room, text]);
        sent.push(text);
      }
      await alice.cli.ok(["create", "open", "--type", "public"]);
      await alice.cli.ok(["keys", "backup", "--passphrase-file", "/dev/stdin"], {
        stdin: "a long enough passphrase for the backup\n",
      });
      await sqlite.stop();
    }, 180_000);

    afterAll(async () => {
      await dropAll();
      cleanupTempDirs();
    });

    test("an interrupted copy resumes; counts and checksums match; a server on PostgreSQL serves the same history", async () => {
      const db = await newDatabase();
      const from = join(dataDir, "wsync.db");
      // Interrupted in the middle of the timeline, as a crash would stop it.
      let stops = 0;
      await expect(
        copySqliteToPostgres({
          from,
          to: db.url,
          batch: 50,
          afterBatch: (table, copied) => {
            if (table === "timeline" && copied >= 50 && stops++ === 0)
              throw new Error("interrupted by the test");
          },
        }),
      ).rejects.toThrow("interrupted by the test");
      const pg = new SQL(db.url, { max: 1 });
      const partial = Number((await pg`SELECT count(*) AS n FROM timeline`)[0].n);
      expect(partial).toBe(50);
      await pg.close();

      // The same command again, through the CLI: resumes, copies the rest once, verifies every table.
      const cli = new Cli("http://127.0.0.1:9");
      const r = await cli.run(["migrate", "--from", `sqlite:${from}`, "--to", db.url], {
        timeoutMs: 120_000,
      });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("timeline: resuming after 50 of");
      for (const table of COPY_TABLES) expect(r.stdout).toMatch(new RegExp(`^ok +${table} `, "m"));
      expect(r.stdout).not.toContain("MISMATCH");
      // The password never shows (there is none here, but the URL is printed without credentials).
      expect(r.stdout).toContain(`Copied into postgres://${new URL(db.url).host}/${db.name}`);

      // Counted and checksummed again by hand: the same numbers as SQLite's.
      const json = await cli.run(["migrate", "--from", `sqlite:${from}`, "--to", db.url, "--json"]);
      expect(json.code).toBe(0);
      const reports = JSON.parse(json.stdout) as {
        table: string;
        source: number;
        destination: number;
        ok: boolean;
      }[];
      expect(reports.every((x) => x.ok && x.source === x.destination)).toBe(true);
      expect(reports.find((x) => x.table === "timeline")?.source).toBeGreaterThanOrEqual(60);

      // A server on PostgreSQL with the same secret: the same sessions, keys and history.
      const server = await startServer(port, { WSYNC_DATABASE_URL: db.url, WSYNC_DATA_DIR: tempDir() });
      try {
        // The same address and secret: everyone's stored session still works, no sign-in needed.
        const onPg = (u: CliUser) => u.cli;
        expect(await onPg(alice).ok(["whoami"])).toContain(alice.handle);
        const read = await onPg(bob).ok(["read", room, "--limit", "100"]);
        for (const text of sent) expect(read).toContain(text);
        expect(read).not.toContain("✗");
        await onPg(bob).ok(["send", room, "after the move"]);
        expect(await onPg(alice).ok(["read", room])).toContain("after the move");
        expect(await onPg(alice).ok(["topic", room])).toContain("old times");
        expect(await onPg(alice).ok(["keys", "backup", "--status"])).toContain("passphrase");
      } finally {
        await server.stop();
      }
    }, 240_000);

    /** Every table's row count, and whether the copy's progress table exists. */
    async function census(url: string) {
      const pg = new SQL(url, { max: 1 });
      try {
        const tables = (
          (await pg`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`) as {
            table_name: string;
          }[]
        )
          .map((t) => t.table_name)
          .sort();
        const counts: Record<string, number> = {};
        for (const t of tables)
          counts[t] = Number((await pg.unsafe(`SELECT count(*) AS n FROM "${t}"`))[0].n);
        return counts;
      } finally {
        await pg.close();
      }
    }

    test("a database that holds another installation is refused before anything is written (exit 8)", async () => {
      const db = await newDatabase();
      // Another installation: its schema, one account and a live session, as a server on it leaves them.
      const pg = new SQL(db.url, { max: 1 });
      await migratePostgres(pg);
      const now = Date.now();
      await pg`INSERT INTO accounts (did, handle, email, password_hash, public_key, fingerprint, created_at)
               VALUES ('did:plc:someoneelse', 'carol.example', 'carol@example.com', 'x', NULL, NULL, ${now})`;
      await pg`INSERT INTO sessions (id, did, refresh_hash, created_at, expires_at)
               VALUES ('s-other', 'did:plc:someoneelse', 'h', ${now}, ${now + 86_400_000})`;
      await pg.close();
      const before = await census(db.url);

      const from = join(dataDir, "wsync.db");
      const r = await new Cli("http://127.0.0.1:9").run([
        "migrate",
        "--from",
        `sqlite:${from}`,
        "--to",
        db.url,
      ]);
      expect(r.code).toBe(8);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`wsync: postgres://${new URL(db.url).host}/${db.name} was not changed`);
      expect(r.stderr).toContain("1 in accounts, 1 in sessions");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      // Nothing written: the same tables with the same rows, and no progress table.
      expect(await census(db.url)).toEqual(before);
      expect(before.wsync_copy_progress).toBeUndefined();
    }, 120_000);

    test("a finished copy changed since (a server ran on it) is refused, and left as it is", async () => {
      const db = await newDatabase();
      const from = join(dataDir, "wsync.db");
      await copySqliteToPostgres({ from, to: db.url });
      // The same source again: every row came from it, so it passes (and verifies).
      const again = await new Cli("http://127.0.0.1:9").run([
        "migrate",
        "--from",
        `sqlite:${from}`,
        "--to",
        db.url,
      ]);
      expect(again.code).toBe(0);
      const pg = new SQL(db.url, { max: 1 });
      await pg`UPDATE channels SET name = 'changed' WHERE id = ${room}`;
      await pg.close();
      const before = await census(db.url);
      const r = await new Cli("http://127.0.0.1:9").run([
        "migrate",
        "--from",
        `sqlite:${from}`,
        "--to",
        db.url,
      ]);
      expect(r.code).toBe(8);
      expect(r.stderr).toContain("1 in channels");
      expect(await census(db.url)).toEqual(before);
      const missing = await new Cli("http://127.0.0.1:9").run([
        "migrate",
        "--from",
        "sqlite:/nope.db",
        "--to",
        db.url,
      ]);
      expect(missing.code).toBe(4);
      const bad = await new Cli("http://127.0.0.1:9").run(["migrate", "--from", from, "--to", db.url]);
      expect(bad.code).toBe(2);
    }, 120_000);
  });
