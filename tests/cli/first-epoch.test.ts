/**
 * Issue 29 defect 3: a channel whose owner's client never made epoch 1 (created, then the owner's
 * client stopped). A member joining it through the CLI must not make epoch 1 itself (every client
 * refuses an epoch 1 that is not the owner's, its own engine included, so the channel was stuck and
 * `send` exited 6): `send` says it waits for the owner's client; once the owner's client has made the
 * keys, it sends.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ok, startTestServer, type TestServer } from "../server/harness.ts";
import { type Person, person, rotate } from "../server/people.ts";
import { type CliUser, cleanupTempDirs, registerCli } from "./cli-harness.ts";

let t: TestServer;
let owner: Person;
let bob: CliUser;

beforeAll(async () => {
  t = await startTestServer();
  owner = await person(t.url, "owner");
  bob = await registerCli(t.url, "bob");
}, 60_000);

afterAll(async () => {
  await t?.stop();
  cleanupTempDirs();
});

const epochNumber = async (uri: string) =>
  (await ok(t.url, "getEpochInfo", { channelUri: uri }, owner.token)).epochInfo.epochNumber;

test("a member never makes epoch 1: `send` waits for the owner's client (exit 1), then works once it has", async () => {
  // The owner's client created the channel and stopped before making its first epoch.
  const { channel } = await ok(t.url, "createChannel", { name: "nokeys", type: "public" }, owner.token);
  const joined = await bob.cli.run(["join", channel.id]);
  expect(joined.code).toBe(0);
  expect(await epochNumber(channel.uri)).toBe(0);

  const refused = await bob.cli.run(["send", channel.id, "hello?"]);
  expect(refused.stderr).toBe(
    "wsync: This channel has no keys yet: waiting for the owner's client to set up keys.\n",
  );
  expect(refused.code).toBe(1);
  // Nothing made on the server by the member: epoch 1 is still the owner's to make.
  expect(await epochNumber(channel.uri)).toBe(0);

  // The owner's client comes back and makes epoch 1 for the members (bob included).
  expect((await rotate(t.url, owner, channel, { reason: "create" })).res.status).toBe(200);
  await bob.cli.ok(["send", channel.id, "hello at last"]);
  const read = await bob.cli.ok(["read", channel.id]);
  expect(read).toContain("hello at last");
  expect(read).not.toContain("✗");
}, 90_000);
