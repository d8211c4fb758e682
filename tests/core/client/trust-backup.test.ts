/**
 * The key backup carries the device's trust state (protocol §8 "Fresh devices"): the uploader
 * (core/client/account/trust-backup.ts) against a scripted server (debounced, merged, 404 and 409 handled,
 * failures retried on the next head move), and end to end: a user with a backup sends in a channel
 * whose head moves; a fresh device restored from the backup starts from that head and those pins, so
 * its channel shows no "fresh-device" mark and a server that then hides the latest epoch is seen
 * rolling back. A trust state that does not open leaves the restored device on the server's word.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { TrustBackup, TrustUploadTiming } from "../../../core/client/account/trust-backup.ts";
import { SendBlockedError } from "../../../core/client/channel/epoch-manager.ts";
import { MemoryStore, type WsyncClient } from "../../../core/client/index.ts";
import { Keyring } from "../../../core/client/keys/keyring.ts";
import type { TrustState } from "../../../core/client/keys/trust.ts";
import { initialState } from "../../../core/client/view/state.ts";
import {
  generateIdentity,
  type Identity,
  importIdentity,
  openTrustState,
  sealTrustState,
  type TrustStateBlob,
} from "../../../core/crypto/index.ts";
import { newRecoveryCode } from "../../../core/crypto/key-backup.ts";
import { ApiError, type ErrorCode } from "../../../core/protocol/index.ts";
import { until } from "./engine-harness.ts";
import {
  hideEpochs,
  kickedChannel as kickedChannelIn,
  secondDevice as secondDeviceOf,
} from "./malicious/fresh-devices.ts";
import { messages, tamperSuite, type User } from "./malicious/tamper.ts";

const DID = "did:plc:trustbackuptestalicezzzz";

// ---- the uploader, against a scripted server ---------------------------------------------------

interface Scripted {
  backup: TrustBackup;
  keyring: Keyring;
  identity: Identity;
  logs: string[];
  /** What the "server" holds, and every PUT it was sent. */
  stored: TrustStateBlob | null;
  puts: TrustStateBlob[];
  /** The next PUT answers are these errors (then the normal rule: stored when newer, else 409). */
  failNext: ErrorCode[];
  hasBackup: boolean;
  opened(b: TrustStateBlob | null): Promise<TrustState>;
}

async function scripted(
  timing = { intervalMs: 300, settleMs: 20, noBackupRecheckMs: 400 },
): Promise<Scripted> {
  const keys = await generateIdentity();
  const store = new MemoryStore();
  const keyring = new Keyring(store);
  const identity = await keyring.saveIdentity(keys.privateKey);
  const state = initialState();
  state.auth.user = { did: DID, handle: "alice.test", email: "a@example.com", publicKey: keys.publicKey };
  const s: Scripted = {
    keyring,
    identity,
    logs: [],
    stored: null,
    puts: [],
    failNext: [],
    hasBackup: true,
    backup: null as unknown as TrustBackup,
    async opened(b) {
      if (!b) throw new Error("nothing stored");
      return (await openTrustState({ did: DID, identity, blob: b })).state as unknown as TrustState;
    },
  };
  const api = {
    async call(name: string, body?: { blob: TrustStateBlob }) {
      if (name === "trustStateGet") {
        if (!s.stored) throw new ApiError("NotFound", "No trust state for this account");
        return { blob: structuredClone(s.stored), updatedAt: 1 };
      }
      if (name !== "trustStatePut" || !body) throw new Error(`unexpected call ${name}`);
      s.puts.push(body.blob);
      const fail = s.failNext.shift();
      if (fail) throw new ApiError(fail, "scripted");
      if (!s.hasBackup) throw new ApiError("NotFound", "No key backup for this account");
      if (s.stored && s.stored.version >= body.blob.version) throw new ApiError("VersionConflict", "stale");
      s.stored = body.blob;
      return { success: true, version: body.blob.version, updatedAt: 1 };
    },
  };
  s.backup = new TrustBackup(
    { state, api: api as never, keyring, now: () => Date.now(), log: (m) => s.logs.push(m) },
    timing,
  );
  keyring.trust.onBump = () => s.backup.schedule();
  return s;
}

describe("the trust-state uploader", () => {
  test("head moves are debounced: one upload after the first, the next not before the interval; the last state wins", async () => {
    const s = await scripted();
    await s.backup.backupSaved();
    expect(s.puts.map((b) => b.version)).toEqual([0]);
    const after = Date.now();
    for (let i = 0; i < 10; i++) await s.keyring.trust.bump();
    await Bun.sleep(100);
    // Still inside the interval since the upload at backupSaved.
    expect(s.puts).toHaveLength(1);
    await until(() => s.puts.length === 2, 2000, "the second upload");
    expect(Date.now() - after).toBeGreaterThanOrEqual(250);
    expect(s.puts[1]?.version).toBe(10);
    expect((await s.opened(s.stored)).version).toBe(10);
    await Bun.sleep(400);
    expect(s.puts).toHaveLength(2);
    expect(s.logs).toEqual([]);
  });

  test("a failed upload is logged and retried on the next head move, never by itself", async () => {
    const s = await scripted({ intervalMs: 50, settleMs: 10, noBackupRecheckMs: 400 });
    s.failNext.push("Unavailable");
    await s.keyring.trust.bump();
    await until(() => s.logs.length === 1, 2000, "the failure logged");
    expect(s.logs[0]).toContain("trust state upload");
    await Bun.sleep(200);
    expect(s.puts).toHaveLength(1);
    expect(s.stored).toBeNull();
    await s.keyring.trust.bump();
    await until(() => s.stored !== null, 2000, "the retry");
    expect(s.stored?.version).toBe(2);
  });

  test("no key backup (404): it stops trying for a while; a backup saved here restarts it at once", async () => {
    const s = await scripted({ intervalMs: 20, settleMs: 10, noBackupRecheckMs: 600 });
    s.hasBackup = false;
    await s.keyring.trust.bump();
    await until(() => s.puts.length === 1, 2000, "the first try");
    await Bun.sleep(50);
    for (let i = 0; i < 5; i++) await s.keyring.trust.bump();
    await Bun.sleep(150);
    expect(s.puts).toHaveLength(1);
    expect(s.logs).toEqual([]);
    s.hasBackup = true;
    await s.backup.backupSaved();
    expect(s.puts).toHaveLength(2);
    expect(s.stored?.version).toBe(6);
    // After the recheck time a head move tries again even without a backup saved here.
    s.hasBackup = false;
    await s.keyring.trust.bump();
    await until(() => s.puts.length === 3, 2000, "the next try");
    await Bun.sleep(700);
    await s.keyring.trust.bump();
    await until(() => s.puts.length === 4, 2000, "a try after the recheck time");
  });

  test("a newer state stored by another device is merged, and the upload goes above its version", async () => {
    const s = await scripted();
    const otherChannel = {
      head: { epochNumber: 9, epochId: "09".repeat(16) },
      epoch: { epochNumber: 9, epochId: "09".repeat(16) },
      firstV2: 1,
      firstV3: 1,
      linkSecret: null,
      owner: DID,
      pairs: {},
      chains: {},
    };
    const theirs = {
      v: 1,
      version: 40,
      createdAt: 1_700_000_000_000,
      pins: { "did:plc:bobbobbobbobbobbobbobbob": "Ym9i" },
      handles: { "did:plc:bobbobbobbobbobbobbobbob": "bob.test" },
      channels: { otherchannel0001: otherChannel },
    };
    s.stored = await sealTrustState({ did: DID, identity: s.identity, version: 40, state: theirs });
    await s.keyring.pin(DID, s.identity.publicKey);
    await s.keyring.trust.bump();
    await s.backup.flush();
    expect(s.puts.map((b) => b.version)).toEqual([41]);
    const merged = await s.opened(s.stored);
    expect(merged.version).toBe(41);
    expect(merged.channels.otherchannel0001).toEqual(otherChannel as never);
    expect(merged.pins).toEqual({ "did:plc:bobbobbobbobbobbobbobbob": "Ym9i", [DID]: s.identity.publicKey });
    expect(merged.handles["did:plc:bobbobbobbobbobbobbobbob"]).toBe("bob.test");
  });

  test("a race with another device (409): fetched again, merged, stored above it", async () => {
    const s = await scripted();
    s.failNext.push("VersionConflict");
    await s.keyring.trust.bump();
    await s.backup.flush();
    expect(s.puts.map((b) => b.version)).toEqual([1, 1]);
    expect(s.stored?.version).toBe(1);
    expect(s.logs).toEqual([]);
  });

  test("a stored blob that does not open (another key, or altered) is replaced, never merged", async () => {
    const s = await scripted();
    const stranger = await importIdentity((await generateIdentity()).privateKey);
    s.stored = await sealTrustState({
      did: DID,
      identity: stranger,
      version: 7,
      state: { v: 1, version: 7, createdAt: 1, pins: { [DID]: "ZXZpbA==" }, handles: {}, channels: {} },
    });
    await s.keyring.trust.bump();
    await s.backup.flush();
    const now = await s.opened(s.stored);
    expect(now.version).toBe(8);
    expect(now.pins[DID]).toBeUndefined();
  });

  test("nothing is uploaded by a device without the account's key", async () => {
    const s = await scripted({ intervalMs: 20, settleMs: 10, noBackupRecheckMs: 100 });
    s.keyring.identity = null;
    await s.keyring.trust.bump();
    await Bun.sleep(100);
    await s.backup.backupSaved();
    expect(s.puts).toEqual([]);
  });
});

// ---- end to end --------------------------------------------------------------------------------

describe("restoring from the key backup brings the trust state", () => {
  const suite = tamperSuite();
  const saved = { ...TrustUploadTiming };
  beforeAll(() => {
    // Faster uploads, so the test does not wait out 5 s intervals (same code path).
    TrustUploadTiming.intervalMs = 500;
  });
  afterAll(() => Object.assign(TrustUploadTiming, saved));
  const devices: WsyncClient[] = [];
  afterEach(() => {
    for (const c of devices.splice(0)) c.disconnect();
  });

  const checks = (c: WsyncClient, channelId: string) =>
    (c.view(channelId)?.warnings ?? []).map((w) => w.check);

  /** A second device of `u` (fresh-devices.ts), closed after the test. */
  async function secondDevice(u: User) {
    const d = await secondDeviceOf(suite, u);
    devices.push(d.client);
    return d;
  }

  /** alice (with a key backup) kicks mallory from a secret channel (epoch N); bob stays. */
  async function kickedChannel() {
    const code = newRecoveryCode();
    const { alice, bob, mallory, channel, before, after } = await kickedChannelIn(suite, async (a) => {
      await a.client.saveKeyBackup({ kind: "recovery-code", secret: code });
      // The backup is saved: the trust state beside it at once (no channel yet).
      const first = await suite.t.storage.accounts.getTrustState(a.did);
      expect(first?.version).toBe(0);
    });
    // alice's device uploads what it verified (debounced): the head of the kick, bob's pinned key.
    let stored: TrustState | null = null;
    const deadline = Date.now() + 10_000;
    while (stored?.channels[channel.id]?.head.epochId !== after?.epochId) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the trust state upload");
      await Bun.sleep(50);
      const row = await suite.t.storage.accounts.getTrustState(alice.did);
      if (row) {
        const opened = await openTrustState({
          did: alice.did,
          identity: alice.identity,
          blob: JSON.parse(row.blob),
        });
        stored = opened.state as unknown as TrustState;
      }
    }
    expect(stored?.version).toBeGreaterThan(0);
    expect(stored?.pins[bob.did]).toBe(bob.keys.publicKey);
    expect(alice.logs.filter((l) => l.startsWith("trust state"))).toEqual([]);
    return { alice, bob, mallory, channel, before, after, code, stored: stored as TrustState };
  }

  test("the restored device has the channel's head and pins: no fresh-device mark, and it reads on", async () => {
    const { alice, bob, channel, after, code, stored } = await kickedChannel();
    const second = await secondDevice(alice);
    await second.client.restoreFromBackup(code);
    expect(second.client.state.auth.keyState).toBe("ready");
    // Where its trust came from: the backup, as of the date of the copy it holds.
    expect(await second.client.trustOrigin()).toEqual({ source: "backup", since: stored.createdAt });
    expect(JSON.parse(second.store.data.get("wsync-pins") ?? "{}")[bob.did]).toBe(bob.keys.publicKey);
    second.client.connect();
    await until(() => second.client.state.connection === "connected", 5000, "connected");
    await second.client.open(channel.id);
    expect(second.client.view(channel.id)?.epoch?.epochId).toBe(after?.epochId);
    expect(checks(second.client, channel.id)).not.toContain("fresh-device");
    expect(checks(second.client, channel.id)).toEqual([]);
    await bob.client.send(channel.id, "after the restore");
    await until(
      () => messages({ client: second.client }, channel.id).some((i) => i.text === "after the restore"),
      5000,
      "the restored device reads bob",
    );
    expect(
      messages({ client: second.client }, channel.id).find((i) => i.text === "after the restore")?.verified,
    ).toBe(true);
    await second.client.send(channel.id, "from the restored device");
    await until(
      () => messages(bob, channel.id).some((i) => i.text === "from the restored device"),
      5000,
      "bob reads",
    );
    expect(second.logs.filter((l) => l.startsWith("trust state"))).toEqual([]);
  });

  test("attack 9 after a restore: a server that hides the kick is seen rolling back, and nothing is sent under the older epoch", async () => {
    const { alice, channel, before, after, code } = await kickedChannel();
    const second = await secondDevice(alice);
    await second.client.restoreFromBackup(code);
    hideEpochs(second.tamper, after?.epochNumber as number, before as NonNullable<typeof before>);
    second.client.connect();
    await until(() => second.client.state.connection === "connected", 5000, "connected");
    await second.client.open(channel.id).catch(() => undefined);
    const outcome = await second.client.send(channel.id, "for alice and bob only").then(
      () => "sent",
      (e: unknown) => e,
    );
    expect(outcome).toBeInstanceOf(SendBlockedError);
    expect(checks(second.client, channel.id)).toContain("rollback");
    expect(checks(second.client, channel.id)).not.toContain("fresh-device");
    expect(second.tamper.sentContents().filter((c) => c.epochId === before?.epochId)).toEqual([]);
  });

  test("a trust state the server relabels (a newer version on an older blob) does not open: the device keeps the server's word", async () => {
    const { alice, channel, code } = await kickedChannel();
    const second = await secondDevice(alice);
    second.tamper.response("trustStateGet", (b) => ({
      ...b,
      blob: { ...(b.blob as TrustStateBlob), version: (b.blob as TrustStateBlob).version + 1 },
    }));
    await second.client.restoreFromBackup(code);
    expect(second.client.state.auth.keyState).toBe("ready");
    expect((await second.client.trustOrigin()).source).toBe("server");
    expect(second.logs.some((l) => l.includes("does not open"))).toBe(true);
    second.client.connect();
    await until(() => second.client.state.connection === "connected", 5000, "connected");
    await second.client.open(channel.id);
    expect(checks(second.client, channel.id)).toContain("fresh-device");
  });
});
