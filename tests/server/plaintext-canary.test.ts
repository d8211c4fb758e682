/**
 * The server never sees a plaintext message or an epoch key: after a real conversation (keys made and
 * wrapped by the clients, messages encrypted and signed by them), none of it is anywhere in the
 * database files, in any of the encodings a careless implementation might store it in.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { fromBase64, toBase64, toHex, unwrapEpochKey } from "../../core/crypto/index.ts";
import { ok, startTestServer, TestSocket } from "./harness.ts";
import { createChannel, invite, linkJoinBody, person, rotate, seal } from "./people.ts";

function encodings(secret: Uint8Array | string): string[] {
  const bytes = typeof secret === "string" ? new TextEncoder().encode(secret) : secret;
  const out = [toHex(bytes), toBase64(bytes), Buffer.from(bytes).toString("base64url")];
  if (typeof secret === "string") out.push(secret);
  else out.push(Buffer.from(bytes).toString("latin1"));
  return out;
}

test("no plaintext, epoch key or private key reaches the database", async () => {
  const t = await startTestServer();
  const [a, b, c] = await Promise.all(["alice", "bob", "carol"].map((n) => person(t.url, n)));
  if (!a || !b || !c) throw new Error("setup");
  const first = await createChannel(t.url, a, "secret", "canary-room");
  const { channel } = first;
  const linkSecret = (first.link as string).split("#")[1] as string;
  const joinBody = await linkJoinBody(b, channel, linkSecret);
  const token = joinBody.joinToken as string;
  await ok(t.url, "joinChannel", joinBody, b.token);
  const e2 = await rotate(t.url, b, channel, { reason: "join", linkSecret });
  expect(e2.res.status).toBe(200);
  await invite(t.url, a, channel, c);
  await ok(t.url, "joinChannel", { channelUri: channel.uri }, c.token);
  // A kick-free rotation by an invited joiner who knows no link secret (state.linkSecret null).
  const e3 = await rotate(t.url, c, channel, { reason: "join" });
  expect(e3.res.status).toBe(200);

  // Each member unwraps epoch 3 from what the server hands out: the conversation is real.
  for (const p of [a, b, c]) {
    const { epochKeys } = await ok(t.url, "getEpochKeys", { channelUri: channel.uri }, p.token);
    const mine = epochKeys.find((k) => k.epochId === e3.epochId);
    if (!mine) throw new Error("no key for epoch 3");
    expect(toHex(await unwrapEpochKey(mine, channel.id, p.identity, p.session.did))).toBe(toHex(e3.epochKey));
  }

  const canaries: string[] = [];
  const sockets = await Promise.all([a, b, c].map((p) => TestSocket.connect(t.wsUrl, p.token)));
  for (const s of sockets) await s.request("channel:join", { channelUri: channel.uri });
  for (let i = 0; i < 20; i++) {
    const p = [a, b, c][i % 3] as typeof a;
    const text = `canary-${i}-${crypto.randomUUID()} the eagle lands at midnight`;
    canaries.push(text);
    const ack = await (sockets[i % 3] as TestSocket).request(
      "channel:message",
      await seal(p, channel, e3, text),
    );
    expect(ack.type).toBe("ack");
  }
  for (const s of sockets) s.close();
  await t.services.storage.close();

  const files = ["", "-wal", "-shm"]
    .map((suffix) => t.config.sqlitePath + suffix)
    .filter((f) => existsSync(f));
  const blob = Buffer.concat(files.map((f) => readFileSync(f))).toString("latin1");
  // The scan works: things the server is meant to store are found.
  expect(blob).toContain("canary-room");
  expect(blob).toContain(e3.epochId);
  expect(blob).toContain(a.publicKey);

  const secrets: (string | Uint8Array)[] = [
    ...canaries,
    "the eagle lands at midnight",
    first.epochKey,
    e2.epochKey,
    e3.epochKey,
    // The link secret never reaches the server; the join token only as its hash.
    linkSecret,
    token,
    ...[a, b, c].map((p) => fromBase64(p.privateKey)),
    ...[a, b, c].map((p) => p.privateKey),
  ];
  for (const s of secrets) {
    for (const enc of encodings(s)) expect(blob.includes(enc)).toBe(false);
  }
  await t.stop().catch(() => undefined);
});
