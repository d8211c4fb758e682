/**
 * `wsync retention <channel> [days]` (docs/cli.md, docs/protocol-extensions.md "Retention"): the owner
 * signs a retention into the channel's next commit; anyone in the channel reads it with the server's
 * announced maximum; a member who is not the owner is refused and nothing changes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, registerCli } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
let channelId: string;

beforeAll(async () => {
  t = await startTestServer({ env: { ...NO_WRITE_LIMITS, WSYNC_RETENTION_MAX_DAYS: "365" } });
  [alice, bob] = await Promise.all([registerCli(t.url, "alice"), registerCli(t.url, "bob")]);
  await alice.cli.ok(["create", "kept", "--type", "public"]);
  channelId = JSON.parse(await alice.cli.ok(["channels", "--json"]))[0].id;
  await bob.cli.ok(["join", channelId]);
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

test("the owner sets it, members read it, with the server's maximum", async () => {
  expect(await alice.cli.ok(["retention", "#kept"])).toBe(
    "Messages older than 365 days are removed by the server (owner's setting none, server's maximum 365 days)\n",
  );
  expect(await alice.cli.ok(["retention", "#kept", "30"])).toBe(
    "Messages older than 30 days are removed by the server (owner's setting 30 days, server's maximum 365 days)\n",
  );
  expect(await t.storage.retention.channelDays(channelId)).toBe(30);
  expect(JSON.parse(await bob.cli.ok(["retention", channelId, "--json"]))).toEqual({
    channelId,
    days: 30,
    signedDays: 30,
    serverMaxDays: 365,
  });
});

test("a member who is not the owner is refused; bad days are a usage error; off clears it", async () => {
  const refused = await bob.cli.run(["retention", channelId, "5"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("Only the channel's owner sets its retention");
  expect(await t.storage.retention.channelDays(channelId)).toBe(30);
  for (const bad of ["0", "36501", "1.5", "soon"]) {
    const r = await alice.cli.run(["retention", channelId, bad]);
    expect(r.code).toBe(2);
  }
  expect(await t.storage.retention.channelDays(channelId)).toBe(30);
  await alice.cli.ok(["retention", channelId, "off"]);
  expect(await t.storage.retention.channelDays(channelId)).toBeNull();
  expect(JSON.parse(await alice.cli.ok(["retention", channelId, "--json"])).days).toBe(365);
});
