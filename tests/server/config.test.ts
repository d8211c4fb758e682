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
