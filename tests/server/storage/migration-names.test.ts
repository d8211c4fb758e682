import { describe, expect, test } from "bun:test";
import {
  checkMigrations,
  MIGRATION_NAMES,
  migrationMismatch,
} from "../../../server/storage/migration-names.ts";
import { openPostgresStorage } from "../../../server/storage/postgres/index.ts";
import { migrations as pgMigrations } from "../../../server/storage/postgres/migrations.ts";
import { openSqliteStorage } from "../../../server/storage/sqlite/index.ts";
import { migrations as sqliteMigrations } from "../../../server/storage/sqlite/migrations.ts";

// server/storage/migration-names.ts is the one list of migration versions; each backend's
// migrations.ts only holds the SQL for them, and is checked against it.

const versions = (...vs: number[]) => vs.map((version) => ({ version }));

describe("migration names", () => {
  test("the shared list is numbered 1, 2, … with a one-line name each", () => {
    expect(MIGRATION_NAMES.map((m) => m.version)).toEqual(MIGRATION_NAMES.map((_, i) => i + 1));
    for (const m of MIGRATION_NAMES) {
      expect(m.name.trim().length).toBeGreaterThan(0);
      expect(m.name).not.toContain("\n");
    }
  });

  test("both backends have the shared list's versions, in its order", () => {
    expect(migrationMismatch(sqliteMigrations)).toBeNull();
    expect(migrationMismatch(pgMigrations)).toBeNull();
    expect(() => checkMigrations("SQLite", sqliteMigrations)).not.toThrow();
    expect(() => checkMigrations("PostgreSQL", pgMigrations)).not.toThrow();
  });

  test("a planted mismatch fails the check: missing, extra, swapped, renumbered, empty", () => {
    const all = MIGRATION_NAMES.map((m) => m.version);
    const last = all.length;
    const planted: [string, { version: number }[], RegExp][] = [
      ["missing last", versions(...all.slice(0, -1)), new RegExp(`should be version ${last} .*but is none`)],
      [
        "missing middle",
        versions(...all.filter((v) => v !== 3)),
        /migration 3 of the list should be version 3/,
      ],
      [
        "extra",
        versions(...all, last + 1),
        new RegExp(`should be no more migrations, but is version ${last + 1}`),
      ],
      [
        "swapped",
        versions(...all.slice(0, 3), all[4] ?? 0, all[3] ?? 0, ...all.slice(5)),
        /should be version 4/,
      ],
      ["renumbered", versions(...all.map((v) => v * 10)), /migration 1 of the list should be version 1/],
      [
        "duplicated",
        versions(...all.slice(0, 2), 2, ...all.slice(2)),
        /should be version 3 .*but is version 2/,
      ],
      ["empty", [], /should be version 1 .*but is none/],
    ];
    for (const [label, list, message] of planted) {
      const mismatch = migrationMismatch(list);
      expect(mismatch, label).not.toBeNull();
      expect(mismatch ?? "", label).toMatch(message);
      expect(() => checkMigrations("SQLite", list), label).toThrow(
        /SQLite migrations do not match server\/storage\/migration-names\.ts/,
      );
    }
  });

  test("start-up refuses a backend whose list does not match, before touching any database", async () => {
    // Planted in the backends' own lists (restored below), so the real start-up path runs the check.
    const extra = { version: MIGRATION_NAMES.length + 1, sql: "SELECT 1" };
    sqliteMigrations.push(extra);
    try {
      expect(() => openSqliteStorage({ path: ":memory:" })).toThrow(
        /SQLite migrations do not match server\/storage\/migration-names\.ts/,
      );
    } finally {
      sqliteMigrations.pop();
    }
    const [first, second] = pgMigrations.splice(0, 2);
    pgMigrations.unshift(second as (typeof pgMigrations)[number], first as (typeof pgMigrations)[number]);
    try {
      // Nothing listens on port 1: had the check not come first, this would be a connection error.
      await expect(openPostgresStorage({ url: "postgres://postgres@127.0.0.1:1/none" })).rejects.toThrow(
        /PostgreSQL migrations do not match server\/storage\/migration-names\.ts: migration 1 of the list should be version 1/,
      );
    } finally {
      pgMigrations.splice(
        0,
        2,
        first as (typeof pgMigrations)[number],
        second as (typeof pgMigrations)[number],
      );
    }
    expect(migrationMismatch(sqliteMigrations)).toBeNull();
    expect(migrationMismatch(pgMigrations)).toBeNull();
  });
});
