/**
 * Retention (docs/protocol-extensions.md "Retention"): the owner signs a retention into the channel's
 * commits, the server announces its maximum, the sweep (with a fake clock) removes records older than
 * the smaller of the two, and members' clients tell that removal from withholding: the records before
 * the oldest one kept read "removed after N days (retention)", while a young record the server drops
 * from the middle still reads as withheld.
 */
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { WsyncClient } from "../../../core/client/index.ts";
import { SecurityText } from "../../../core/client/view/security-text.ts";
import { Retention } from "../../../core/protocol/index.ts";
import { RetentionSweep } from "../../../server/services/retention.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../../server/harness.ts";
import { signedUp, texts, until } from "./engine-harness.ts";

let t: TestServer;
const clients: WsyncClient[] = [];
beforeEach(async () => {
  t = await startTestServer({ env: { ...NO_WRITE_LIMITS, WSYNC_RETENTION_MAX_DAYS: "90" } });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await t.stop();
});

const quiet = { info: () => undefined, warn: () => undefined };
/** A sweep over the test server's storage whose clock reads `now`. */
const sweepAt = (now: number, maxDays: number | null = 90) =>
  new RetentionSweep({
    store: t.storage.retention,
    clock: { now: () => now },
    config: { retentionMaxDays: maxDays },
    logger: quiet,
  }).sweep();

test("the server announces its maximum, and only the owner's signed setting counts", async () => {
  const info = await (await fetch(`${t.url}/api/server/info`)).json();
  expect(info.retentionMaxDays).toBe(90);
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  clients.push(alice.client, bob.client);
  const { channel } = await alice.client.createChannel({ name: "kept", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  await bob.client.open(channel.id);
  await bob.client.send(channel.id, "hi");
  await until(() => texts(alice.client, channel.id).includes("hi"));
  // Before any setting: the server's maximum.
  await until(() => alice.client.retention(channel.id)?.days === 90);
  await alice.client.setRetention(channel.id, 30);
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);
  await until(() => alice.client.retention(channel.id)?.days === 30);
  expect(alice.client.retention(channel.id)).toEqual({ days: 30, signedDays: 30, serverMaxDays: 90 });
  // Bob verifies the owner's commit and reads the same.
  await bob.client.send(channel.id, "under retention");
  await until(() => bob.client.retention(channel.id)?.days === 30, 10_000, "bob reads 30 days");
  // A member is not the owner: the client refuses, and so does the server.
  await expect(bob.client.setRetention(channel.id, 5)).rejects.toThrow(/owner/);
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);
  // Bob's own rotation carries no retention, and the owner's setting stays in force.
  await bob.client.rotate(channel.id);
  await bob.client.send(channel.id, "after bob's rotation");
  await until(() => texts(alice.client, channel.id).includes("after bob's rotation"));
  expect(await t.storage.retention.channelDays(channel.id)).toBe(30);
  expect(alice.client.retention(channel.id)?.days).toBe(30);
  // Cleared by the owner: the server's maximum again.
  await alice.client.setRetention(channel.id, null);
  expect(await t.storage.retention.channelDays(channel.id)).toBeNull();
  await until(() => alice.client.retention(channel.id)?.days === 90);
});

test("the sweep removes what is older than the retention, and clients say so instead of warning", async () => {
  const alice = await signedUp(t.url, "alice");
  const bob = await signedUp(t.url, "bob");
  clients.push(alice.client, bob.client);
  const { channel } = await alice.client.createChannel({ name: "sweep", type: "public" });
  await alice.client.open(channel.id);
  await bob.client.join(channel.id);
  await bob.client.open(channel.id);
  await alice.client.setRetention(channel.id, 30);
  for (const text of ["old 1", "old 2"]) await bob.client.send(channel.id, text);
  await alice.client.send(channel.id, "old 3");
  await until(() => texts(alice.client, channel.id).includes("old 2"));
  await Bun.sleep(5);
  const mid = Date.now();
  await Bun.sleep(5);
  for (const text of ["new 1", "new 2", "new 3"]) await bob.client.send(channel.id, text);
  await until(() => texts(alice.client, channel.id).includes("new 3"));

  // 29 days after `mid` nothing is old enough; 30 days after, everything stored before `mid` goes.
  expect((await sweepAt(mid + 29 * Retention.dayMs)).removed).toBe(0);
  const swept = await sweepAt(mid + 30 * Retention.dayMs);
  expect(swept.removed).toBeGreaterThanOrEqual(3);
  expect(swept.channels).toBe(1);
  // Idempotent: a second sweep finds nothing more.
  expect((await sweepAt(mid + 30 * Retention.dayMs)).removed).toBe(0);

  // Alice reads the channel again from the server.
  const view = await alice.client.open(channel.id);
  await until(() => view.items.some((i) => i.retained), 10_000, "the retention row");
  expect(texts(alice.client, channel.id)).toEqual(["new 1", "new 2", "new 3"]);
  const retained = view.items.filter((i) => i.kind === "missing" && i.retained);
  expect(retained).toHaveLength(1);
  expect(retained[0]?.text).toBe(SecurityText.retained(30));
  expect(retained[0]?.text).toBe("removed after 30 days (retention)");
  expect(view.items.some((i) => i.kind === "missing" && !i.retained)).toBe(false);
  expect(view.warnings.some((w) => w.check === "withheld")).toBe(false);

  // A server that lies about retention and drops a young record from the middle: still withheld.
  const db = new Database(t.config.sqlitePath);
  const young = view.items.find((i) => i.text === "new 2");
  db.query("DELETE FROM timeline WHERE channel_id = ? AND seq = ?").run(channel.id, young?.seq ?? -1);
  db.close();
  const again = await alice.client.open(channel.id);
  await until(() => again.items.some((i) => i.kind === "missing" && !i.retained), 10_000, "the withheld row");
  const withheld = again.items.filter((i) => i.kind === "missing" && !i.retained && i.missing);
  expect(withheld.map((i) => i.missing)).toEqual([{ from: young?.seq ?? -1, to: young?.seq ?? -1 }]);
  expect(withheld[0]?.text).toBe(SecurityText.missing);
});

test("without a signed setting the server's maximum is in force", async () => {
  const alice = await signedUp(t.url, "alice");
  clients.push(alice.client);
  const { channel } = await alice.client.createChannel({ name: "max", type: "public" });
  await alice.client.open(channel.id);
  await alice.client.send(channel.id, "one");
  await Bun.sleep(5);
  const mid = Date.now();
  await Bun.sleep(5);
  await alice.client.send(channel.id, "two");
  const swept = await sweepAt(mid + 90 * Retention.dayMs, 90);
  expect(swept.removed).toBeGreaterThan(0);
  const view = await alice.client.open(channel.id);
  await until(() => view.items.some((i) => i.retained), 10_000, "the retention row");
  expect(alice.client.retention(channel.id)).toEqual({ days: 90, signedDays: null, serverMaxDays: 90 });
  expect(view.items.find((i) => i.retained)?.text).toBe("removed after 90 days (retention)");
  expect(texts(alice.client, channel.id)).toEqual(["two"]);
  expect(view.warnings.some((w) => w.check === "withheld")).toBe(false);
  // Without any retention (no setting, no maximum), nothing is removed.
  expect((await sweepAt(mid + 10_000 * Retention.dayMs, null)).removed).toBe(0);
});
