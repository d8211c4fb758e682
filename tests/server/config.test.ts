import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../server/config.ts";

test("token lifetimes: defaults, settings, and values refused with the setting's name", () => {
  const base = { WSYNC_DATA_DIR: "/tmp/wsync-config-test" };
  const d = loadConfig(base);
  expect(d.accessTokenTtlSeconds).toBe(900);
  expect(d.refreshGraceSeconds).toBe(30);
  const set = loadConfig({ ...base, WSYNC_ACCESS_TOKEN_TTL_SECONDS: "8", WSYNC_REFRESH_GRACE_SECONDS: "0" });
  expect(set.accessTokenTtlSeconds).toBe(8);
  expect(set.refreshGraceSeconds).toBe(0);
  for (const [key, value] of [
    ["WSYNC_ACCESS_TOKEN_TTL_SECONDS", "2"],
    ["WSYNC_ACCESS_TOKEN_TTL_SECONDS", "1.5"],
    ["WSYNC_ACCESS_TOKEN_TTL_SECONDS", "forever"],
    ["WSYNC_REFRESH_GRACE_SECONDS", "-1"],
    ["WSYNC_REFRESH_GRACE_SECONDS", "301"],
  ] as const) {
    expect(() => loadConfig({ ...base, [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [key]: value })).toThrow(key);
  }
});

test("socket limits: defaults 64 per address, 16 per user, 1 MiB backlog; settings; bad values refused by name", () => {
  const base = { WSYNC_DATA_DIR: "/tmp/x" };
  expect(loadConfig(base).sockets).toEqual({ perAddress: 64, perUser: 16, maxBacklogBytes: 1024 * 1024 });
  expect(
    loadConfig({ ...base, WSYNC_MAX_SOCKETS_PER_ADDRESS: "500", WSYNC_MAX_SOCKETS_PER_USER: "4" }).sockets,
  ).toEqual({ perAddress: 500, perUser: 4, maxBacklogBytes: 1024 * 1024 });
  expect(() => loadConfig({ ...base, WSYNC_MAX_SOCKETS_PER_ADDRESS: "0" })).toThrow(
    "WSYNC_MAX_SOCKETS_PER_ADDRESS must be a whole number",
  );
  expect(() => loadConfig({ ...base, WSYNC_MAX_SOCKETS_PER_USER: "2.5" })).toThrow(
    "WSYNC_MAX_SOCKETS_PER_USER",
  );
});

test("`wsync serve --help` states every socket limit setting with the default the server uses", async () => {
  const { SERVE_SETTINGS } = await import("../../cli/subcommands/serve.ts");
  const { SOCKET_DEFAULTS } = await import("../../server/config.ts");
  const { DEFAULT_MAX_OWNED_CHANNELS } = await import("../../server/services/rate-limit.ts");
  expect(SERVE_SETTINGS).toMatch(
    new RegExp(`WSYNC_MAX_SOCKETS_PER_ADDRESS .*\\[${SOCKET_DEFAULTS.perAddress}\\]`),
  );
  expect(SERVE_SETTINGS).toMatch(new RegExp(`WSYNC_MAX_SOCKETS_PER_USER .*\\[${SOCKET_DEFAULTS.perUser}\\]`));
  expect(SERVE_SETTINGS).toMatch(
    new RegExp(`WSYNC_WS_MAX_BACKLOG_BYTES .*\\[${SOCKET_DEFAULTS.maxBacklogBytes}\\]`),
  );
  expect(SERVE_SETTINGS).toMatch(
    new RegExp(`WSYNC_MAX_OWNED_CHANNELS .*\\[${DEFAULT_MAX_OWNED_CHANNELS}\\]`),
  );
});

test("retention: no maximum by default, a sweep every 60 minutes; settings; bad values refused by name", async () => {
  const base = { WSYNC_DATA_DIR: "/tmp/x" };
  const d = loadConfig(base);
  expect(d.retentionMaxDays).toBeNull();
  expect(d.retentionSweepMinutes).toBe(60);
  const set = loadConfig({ ...base, WSYNC_RETENTION_MAX_DAYS: "365", WSYNC_RETENTION_SWEEP_MINUTES: "5" });
  expect(set.retentionMaxDays).toBe(365);
  expect(set.retentionSweepMinutes).toBe(5);
  for (const [key, value] of [
    ["WSYNC_RETENTION_MAX_DAYS", "0"],
    ["WSYNC_RETENTION_MAX_DAYS", "36501"],
    ["WSYNC_RETENTION_MAX_DAYS", "1.5"],
    ["WSYNC_RETENTION_SWEEP_MINUTES", "0"],
  ] as const) {
    expect(() => loadConfig({ ...base, [key]: value })).toThrow(key);
  }
  const { SERVE_SETTINGS } = await import("../../cli/subcommands/serve.ts");
  expect(SERVE_SETTINGS).toContain("WSYNC_RETENTION_MAX_DAYS");
  expect(SERVE_SETTINGS).toContain("WSYNC_RETENTION_SWEEP_MINUTES [60]");
});

test("the SQLite writer thread: on by default, WSYNC_SQLITE_WRITER_THREAD=0 turns it off, other values refused", () => {
  const base = { WSYNC_JWT_SECRET: "x".repeat(32) };
  expect(loadConfig(base).sqliteWriterThread).toBe(true);
  expect(loadConfig({ ...base, WSYNC_SQLITE_WRITER_THREAD: "0" }).sqliteWriterThread).toBe(false);
  expect(() => loadConfig({ ...base, WSYNC_SQLITE_WRITER_THREAD: "yes" })).toThrow(
    "WSYNC_SQLITE_WRITER_THREAD",
  );
});
