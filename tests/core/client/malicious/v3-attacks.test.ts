/**
 * Protocol v3 (section 8) against a lying server: one test per attack the outside review of v2 found.
 * Each drives real engines through a tampering server (responses rewritten, frames injected, rows
 * written straight into its storage) and asserts both that the attack fails and that the person sees
 * the warning naming the check; nothing that should not be is ever shown as verified.
 */
import { expect, test } from "bun:test";
import { SendBlockedError } from "../../../../core/client/channel/epoch-manager.ts";
import { presentTimeline } from "../../../../core/client/channel/rich.ts";
import {
  buildDeletionV3,
  fingerprint,
  generateEpochKey,
  importIdentity,
  keyCommitment,
  newEpochId,
  sealState,
  signCommit,
  signObject,
  unwrapEpochKey,
} from "../../../../core/crypto/index.ts";
import type { CommitV3, Member, MessageRecord } from "../../../../core/protocol/index.ts";
import { until } from "../engine-harness.ts";
import { insertForgedEpoch } from "./forge-epoch.ts";
import { messages, serverKeyPair, tamperSuite, type User } from "./tamper.ts";

const suite = tamperSuite();

const checks = (u: User, channelId: string) => (u.client.view(channelId)?.warnings ?? []).map((w) => w.check);

async function trio(type: "public" | "invite" | "secret" = "public") {
  const alice = await suite.user("alice");
  const bob = await suite.user("bob");
  const { channel, link } = await alice.client.createChannel({ name: "v3", type });
  if (type === "public") await bob.client.join(channel.id);
  else if (type === "secret") await bob.client.join(link as string);
  else {
    await alice.client.invite(channel.id, bob.handle);
    await bob.client.join(channel.id);
  }
  await until(() => alice.client.view(channel.id)?.epoch?.epochNumber === 2, 5000, "alice sees bob's epoch");
  await alice.client.send(channel.id, "hello bob");
  await until(() => messages(bob, channel.id).some((i) => i.text === "hello bob"), 5000, "bob reads");
  return { alice, bob, channel, link: link ?? null };
}

test("attack 1 (critical): a newcomer shown the server's key for alice wraps nothing to it, and bob refuses a commit that re-keys alice", async () => {
  const { alice, bob, channel } = await trio();
  const server = await serverKeyPair();
  const carol = await suite.user("carol");
  // The server shows carol its own key as alice's, everywhere carol asks.
  const swap = <T extends { did: string; publicKey?: string | null }>(m: T): T =>
    m.did === alice.did ? { ...m, publicKey: server.publicKey } : m;
  carol.tamper.response("getMembers", (b) => ({ ...b, members: b.members.map(swap) }));
  carol.tamper.response("joinChannel", (b) => ({ ...b, members: b.members.map(swap) }));
  carol.tamper.response("getKeys", (b) => ({ ...b, keys: b.keys.map((k) => swap(k)) }));
  await carol.client.join(channel.id).catch(() => undefined);
  await until(() => checks(carol, channel.id).includes("member-key"), 5000, "carol's member-key warning");
  const w = carol.client.view(channel.id)?.warnings.find((x) => x.check === "member-key");
  expect(w?.text).toContain("the channel's signed member list");
  // Whatever carol sent the server, no wrap opens with the server's key as alice's.
  for (const r of carol.tamper.requests.filter((x) => x.route === "createEpoch")) {
    const body = r.body as { commit: CommitV3; wrappedKeys: Parameters<typeof unwrapEpochKey>[0][] };
    const listed = body.commit.members.find((m) => m.did === alice.did);
    expect(listed?.fp).toBe(await fingerprint(alice.keys.publicKey));
    for (const wrap of body.wrappedKeys.filter((k) => k.recipientDid === alice.did)) {
      const opened = await unwrapEpochKey(wrap, channel.id, server.identity, alice.did, 3).then(
        () => true,
        () => false,
      );
      expect(opened).toBe(false);
    }
  }

  // A newcomer that did copy the server's key (a v2 client, or one in league with the server): its
  // commit re-keys alice. bob must refuse it, warn member-key, and never send under it.
  const state = await suite.t.storage.epochs.state(channel.id);
  const prev = bob.client.view(channel.id)?.epoch;
  const key = generateEpochKey();
  const epochId = newEpochId();
  const n = (prev?.epochNumber ?? 2) + 1;
  const carolIdentity = await importIdentity(carol.keys.privateKey);
  const commit: CommitV3 = {
    v: 3,
    channelId: channel.id,
    epochNumber: n,
    epochId,
    prevEpochId: prev?.epochId ?? null,
    creatorDid: carol.did,
    reason: "join",
    members: [
      { did: alice.did, fp: await fingerprint(server.publicKey), handle: alice.handle },
      { did: bob.did, fp: await fingerprint(bob.keys.publicKey), handle: bob.handle },
      { did: carol.did, fp: await fingerprint(carol.keys.publicKey), handle: carol.handle },
    ].sort((a, b) => (a.did < b.did ? -1 : 1)),
    chains: [],
    keyCommitment: await keyCommitment({ channelId: channel.id, epochId, epochNumber: n, epochKey: key }),
    sealedState: await sealState({
      channelId: channel.id,
      epochId,
      epochKey: key,
      state: { linkSecret: null },
    }),
    createdAt: Date.now(),
  };
  void state;
  const signature = await signCommit(carolIdentity, commit);
  await insertForgedEpoch(
    suite,
    channel.id,
    commit,
    signature,
    [
      { did: bob.did, publicKey: bob.keys.publicKey },
      { did: alice.did, publicKey: server.publicKey },
    ],
    key,
  );
  await bob.client.send(channel.id, "after the re-key").catch(() => undefined);
  await until(() => checks(bob, channel.id).includes("member-key"), 5000, "bob's member-key warning");
  const bw = bob.client.view(channel.id)?.warnings.find((x) => x.check === "member-key");
  expect(bw?.epochNumber).toBe(n);
  // Nothing bob handed the server is under the epoch whose key the server knows.
  expect(bob.tamper.sentContents().some((c) => c.epochId === epochId)).toBe(false);
  // And no message "from alice" signed by the server's key is ever shown verified.
  expect(messages(bob, channel.id).every((i) => i.author.did !== alice.did || i.text === "hello bob")).toBe(
    true,
  );
});

test("attack 2: a ghost admitted by a made-up link proof is refused by a member who came in by invite", async () => {
  const { alice, bob, channel } = await trio("secret");
  const carol = await suite.user("carol");
  await alice.client.invite(channel.id, carol.handle);
  await carol.client.join(channel.id);
  await until(() => carol.client.view(channel.id)?.keysLoaded === true, 5000, "carol in");
  await until(() => alice.client.view(channel.id)?.epoch?.epochNumber === 3, 5000, "epoch 3");
  // carol came by invite and now knows the link (sealed to her in the invite).
  expect(carol.client.view(channel.id)?.link).toContain("#");
  const ghost = await serverKeyPair();
  const ghostDid = "did:plc:ghostghostghostghostghost";
  const fake: Member = {
    did: ghostDid,
    handle: "ghost.test",
    publicKey: ghost.publicKey,
    fingerprint: await fingerprint(ghost.publicKey),
    online: false,
    admission: {
      kind: "link",
      proof: {
        v: 2,
        channelId: channel.id,
        did: ghostDid,
        fp: await fingerprint(ghost.publicKey),
        createdAt: Date.now(),
        mac: `${"A".repeat(43)}=`,
      },
    },
  } as Member;
  carol.tamper.response("getMembers", (b) => ({ ...b, members: [...b.members, fake] }));
  const ghostFp = await fingerprint(ghost.publicKey);
  carol.tamper.response("getKeys", (b) => ({
    ...b,
    keys: [
      ...b.keys,
      { did: ghostDid, handle: "ghost.test", publicKey: ghost.publicKey, fingerprint: ghostFp },
    ],
  }));
  carol.tamper.response("getEpochInfo", (b) => ({
    ...b,
    epochInfo: { ...b.epochInfo, rotationRequired: true },
  }));
  const err = await carol.client.rotate(channel.id).catch((e) => e);
  expect(err).toBeInstanceOf(SendBlockedError);
  expect(checks(carol, channel.id)).toContain("admission");
  const wraps = carol.tamper.requests
    .filter((r) => r.route === "createEpoch")
    .flatMap((r) => (r.body as { wrappedKeys: { recipientDid: string }[] }).wrappedKeys);
  expect(wraps.some((k) => k.recipientDid === ghostDid)).toBe(false);
  void bob;
});

test("attack 3: a newcomer shown swapped names never sees a message verified under the wrong name", async () => {
  const { alice, bob, channel } = await trio();
  await bob.client.send(channel.id, "bob speaks");
  const carol = await suite.user("carol");
  const swapName = (h: string) => (h === alice.handle ? bob.handle : h === bob.handle ? alice.handle : h);
  carol.tamper.response("getMembers", (b) => ({
    ...b,
    members: b.members.map((m) => ({ ...m, handle: swapName(m.handle) })),
  }));
  carol.tamper.response("getKeys", (b) => ({
    ...b,
    keys: b.keys.map((k) => ({ ...k, handle: swapName(k.handle) })),
  }));
  const renameRecords = (records: MessageRecord[]) =>
    records.map((r) =>
      r.value.$type === "chat.wsync.message"
        ? {
            ...r,
            value: { ...r.value, author: { ...r.value.author, handle: swapName(r.value.author.handle) } },
          }
        : r,
    );
  carol.tamper.response("getMessages", (b) => ({
    ...b,
    records: renameRecords(b.records as MessageRecord[]),
  }));
  await carol.client.join(channel.id);
  await alice.client.send(channel.id, "I am alice");
  await until(() => messages(carol, channel.id).some((i) => i.text === "I am alice"), 5000, "carol reads");
  for (const i of messages(carol, channel.id)) {
    if (!i.verified) continue;
    // A verified message is shown under the name the signed commit gives its author.
    const real =
      i.author.did === alice.did ? alice.handle : i.author.did === bob.did ? bob.handle : carol.handle;
    expect(i.author.handle).toBe(real);
  }
  // The swap itself shows as a name warning for whoever the server renamed in what it sent, and the
  // message stays under the signed name, not verified while that warning is open.
  const m = messages(carol, channel.id).find((i) => i.text === "I am alice");
  expect(m?.author.handle).toBe(alice.handle);
  expect(m?.verified).toBe(false);
  expect(checks(carol, channel.id)).toContain("handle");
});

test("attack 4: withheld messages renumbered away show as missing from the sender's chain", async () => {
  const { alice, bob, channel } = await trio();
  // The server keeps alice's next messages from bob's socket, then serves a history without two of
  // them, later seqs shifted down so no seq is missing.
  bob.tamper.frames((f) => (f.type === "channel:message" ? null : f));
  for (const t of ["one", "two", "three", "four", "five"]) await alice.client.send(channel.id, t);
  const hidden = new Set(
    messages(alice, channel.id)
      .filter((i) => i.text === "three" || i.text === "four")
      .map((i) => i.clientMsgId),
  );
  bob.tamper.response("getMessages", (b) => {
    const kept: MessageRecord[] = [];
    let shift = 0;
    for (const r of [...(b.records as MessageRecord[])].sort((x, y) => x.seq - y.seq)) {
      const id =
        r.value.$type === "chat.wsync.message" && r.value.content
          ? JSON.parse(r.value.content).clientMsgId
          : null;
      if (id && hidden.has(id)) {
        shift++;
        continue;
      }
      kept.push({ ...r, seq: r.seq - shift });
    }
    return { ...b, records: kept };
  });
  await bob.client.open(channel.id);
  await until(() => messages(bob, channel.id).some((i) => i.text === "five"), 5000, "bob reloads");
  // No seq is missing, so v2's check sees nothing; alice's chain skips two numbers.
  expect((bob.client.view(channel.id)?.items ?? []).some((i) => i.kind === "missing" && !i.withheld)).toBe(
    false,
  );
  await until(
    () => (bob.client.view(channel.id)?.items ?? []).some((i) => i.withheld && i.withheld.did === alice.did),
    5000,
    "bob's withheld row",
  );
  const row = bob.client.view(channel.id)?.items.find((i) => i.withheld);
  expect(row?.text).toBe(`2 messages from ${alice.handle} missing (withheld by the server)`);
  // In its place: after "two", before "five".
  const items = bob.client.view(channel.id)?.items ?? [];
  const at = items.indexOf(row as (typeof items)[number]);
  expect(items[at - 1]?.text).toBe("two");
  expect(items[at + 1]?.text).toBe("five");
  expect(checks(bob, channel.id)).toContain("withheld");
});

test("attack 5: a signed deletion moved onto another message is not shown as deleted by its signer", async () => {
  const { alice, bob, channel } = await trio();
  const typo = await alice.client.send(channel.id, "teh typo");
  const agree = await alice.client.send(channel.id, "I agree");
  await alice.client.deleteMessage(typo.uri, channel.id);
  await until(
    () => messages(bob, channel.id).some((i) => i.uri === typo.uri && i.deleted?.signed),
    5000,
    "bob sees the real deletion",
  );
  // The server takes alice's genuine deletion of the typo and shows it on "I agree" instead.
  const eve = bob; // bob reloads: the server moves the deletion in what it sends him
  const typoRecord = bob.client.view(channel.id)?.items.find((i) => i.uri === typo.uri);
  expect(typoRecord?.deleted?.signed).toBe(true);
  let moved: MessageRecord["value"]["deletion"];
  eve.tamper.response("getMessages", (b) => {
    const rs = b.records as MessageRecord[];
    moved ??= rs.find((r) => r.uri === typo.uri)?.value.deletion;
    return {
      ...b,
      records: rs.map((r) =>
        r.uri === agree.uri && moved
          ? {
              ...r,
              value: {
                ...r.value,
                content: "",
                deletion: moved,
                tombstone: { senderDid: alice.did, clientMsgId: agree.clientMsgId as string },
              },
            }
          : r,
      ),
    };
  });
  await eve.client.open(channel.id);
  await until(
    () => messages(eve, channel.id).some((i) => i.uri === agree.uri && i.deleted !== undefined),
    5000,
    "the moved deletion arrives",
  );
  const shown = messages(eve, channel.id).find((i) => i.uri === agree.uri);
  expect(shown?.deleted?.signed).toBe(false);
  expect(checks(eve, channel.id)).toContain("deletion");
});

test("attack 6: a member the server calls owner cannot delete others' messages, however valid their signature", async () => {
  const { alice, bob, channel } = await trio();
  const carol = await suite.user("carol");
  // carol is told bob owns the channel.
  const claim = <T extends { channel: { owner?: { did: string; handle: string } | null } }>(b: T): T => ({
    ...b,
    channel: { ...b.channel, owner: { did: bob.did, handle: bob.handle } },
  });
  carol.tamper.response("joinChannel", claim);
  await carol.client.join(channel.id);
  await until(() => alice.client.view(channel.id)?.epoch?.epochNumber === 3, 5000, "carol's epoch");
  const target = await alice.client.send(channel.id, "alice's words");
  await until(() => messages(carol, channel.id).some((i) => i.uri === target.uri), 5000, "carol reads");
  expect(carol.client.view(channel.id)?.channel.owner?.did).toBe(bob.did);
  // bob signs a perfectly valid v3 deletion of alice's message.
  const deletion = buildDeletionV3({
    channelId: channel.id,
    target: { did: alice.did, clientMsgId: target.clientMsgId as string },
    byDid: bob.did,
    createdAt: Date.now(),
  });
  const signature = await signObject(bob.identity, deletion);
  carol.tamper.inject({
    type: "channel:message:deleted",
    data: { channelUri: channel.uri, uri: target.uri, deletion: { deletion, signature } },
  });
  await until(
    () => messages(carol, channel.id).some((i) => i.uri === target.uri && i.deleted !== undefined),
    5000,
    "the deletion frame applied",
  );
  expect(messages(carol, channel.id).find((i) => i.uri === target.uri)?.deleted?.signed).toBe(false);
  expect(checks(carol, channel.id)).toContain("deletion");
  // The owner's own deletion (alice made epoch 1) is honoured on alice's device.
  void alice;
});

test("attack 8: forged typing from a non-member and a forged read marker change nothing", async () => {
  const { alice, bob, channel } = await trio();
  const stranger = "did:plc:strangerstrangerstrangers";
  bob.tamper.inject({
    type: "channel:typing",
    data: { channelId: channel.id, did: stranger, handle: alice.handle },
  });
  bob.tamper.inject({
    type: "channel:typing",
    data: { channelId: channel.id, did: alice.did, handle: "someone-else" },
  });
  await until(() => (bob.client.state.typing[channel.id] ?? []).length > 0, 5000, "alice's typing shows");
  const shown = bob.client.state.typing[channel.id] ?? [];
  expect(shown.some((t) => t.did === stranger)).toBe(false);
  expect(shown.find((t) => t.did === alice.did)?.handle).toBe(alice.handle);
  // A read marker the server made up (signed by another key) does not clear bob's unread count.
  const before = bob.client.state.readMarkers[channel.id] ?? 0;
  const forged = await serverKeyPair();
  const marker = { v: 3 as const, channelId: channel.id, seq: 9999, createdAt: Date.now() };
  bob.tamper.inject({
    type: "channel:read",
    data: { channelId: channel.id, seq: 9999, marker, signature: await signObject(forged.identity, marker) },
  });
  bob.tamper.inject({
    type: "channel:read",
    data: { channelId: channel.id, seq: 9999, marker: null, signature: null },
  });
  await Bun.sleep(300);
  expect(bob.client.state.readMarkers[channel.id] ?? 0).toBe(before);
});

test("attack 7: edits reordered by seq still show the end of the signed chain; two edits of one predecessor show a conflict", async () => {
  const { alice, bob, channel } = await trio();
  const m = await alice.client.send(channel.id, "first draft");
  await until(() => messages(bob, channel.id).some((i) => i.uri === m.uri), 5000, "bob reads");
  // bob first sees the edits in the server's order (his socket does not deliver them live).
  const live = bob.tamper.frames((f) => (f.type === "channel:message" ? null : f));
  const e1 = await alice.client.edit(channel.id, m, "second draft");
  const e2 = await alice.client.edit(channel.id, m, "final text");
  expect(e2.rich?.prev).toBe(e1.clientMsgId);
  // The server swaps the two edits' seqs for bob's reload: "the newest by seq" would be the superseded one.
  bob.tamper.response("getMessages", (b) => ({
    ...b,
    records: (b.records as MessageRecord[]).map((r) =>
      r.uri === e1.uri ? { ...r, seq: e2.seq } : r.uri === e2.uri ? { ...r, seq: e1.seq } : r,
    ),
  }));
  await bob.client.open(channel.id);
  await until(() => messages(bob, channel.id).some((i) => i.uri === e2.uri), 5000, "bob reloads");
  const shown = presentTimeline(bob.client.view(channel.id)?.items ?? [], bob.did).find(
    (p) => p.item.uri === m.uri,
  );
  expect(shown?.text).toBe("final text");
  expect(shown?.edited).toBe(true);
  expect(shown?.editConflict).toBe(false);
  live();

  // Two edits naming the same predecessor (two of alice's devices at once): the later by signed time
  // shows, marked as a conflict.
  const target = messages(alice, channel.id).find((i) => i.uri === m.uri) as NonNullable<
    ReturnType<typeof messages>[number]
  >;
  const sendEdit = (text: string, ts: number) =>
    (
      alice.client as unknown as {
        parts(): Promise<{ channels: { send: (...a: unknown[]) => Promise<unknown> } }>;
      }
    )
      .parts()
      .then((p) =>
        p.channels.send(channel.id, text, {
          body: {
            type: "edit",
            text,
            to: { did: alice.did, clientMsgId: target.clientMsgId },
            prev: e2.clientMsgId,
          },
        }),
      )
      .then(() => ts);
  await sendEdit("branch one", 1);
  await sendEdit("branch two", 2);
  await until(
    () => messages(bob, channel.id).filter((i) => i.rich?.type === "edit").length === 4,
    5000,
    "bob has every edit",
  );
  const after = presentTimeline(bob.client.view(channel.id)?.items ?? [], bob.did).find(
    (p) => p.item.uri === m.uri,
  );
  expect(after?.text).toBe("branch two");
  expect(after?.editConflict).toBe(true);
});
