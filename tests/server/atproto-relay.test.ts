/**
 * The chat-key proof relay (server/atproto-relay): a real test server in front of a local stand-in
 * for the PLC directory and a PDS (serving bytes the tests made with the reference ATProto libraries),
 * and the client's check over it end to end (core/atproto/relay-source.ts + verify.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Secp256k1Keypair } from "@atproto/crypto";
import * as plc from "@did-plc/lib";
import { relaySource } from "../../core/atproto/relay-source.ts";
import { checkKeyProof } from "../../core/atproto/verify.ts";
import { relayConfig } from "../../server/atproto-relay/config.ts";
import { auditLog, chatKey, makePlcAccount, makeRepo, recordCar, SERVER } from "../core/atproto/fixture.ts";
import { ok, startTestServer, type TestServer } from "./harness.ts";
import { createChannel, type Person, person } from "./people.ts";

let t: TestServer;
let upstream: ReturnType<typeof Bun.serve>;
let viewer: Person;
let acct: Awaited<ReturnType<typeof makePlcAccount>>;
let chat: Awaited<ReturnType<typeof chatKey>>;
const served = { log: null as unknown, car: null as Uint8Array<ArrayBuffer> | null, hang: false, hits: 0 };

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      served.hits++;
      const url = new URL(req.url);
      if (served.hang) await new Promise((r) => setTimeout(r, 3000));
      if (url.pathname === `/${acct.did}/log/audit`)
        return served.log ? Response.json(served.log) : new Response("not found", { status: 404 });
      if (url.pathname === `/${acct.did}`)
        return Response.json({
          id: acct.did,
          service: [
            {
              id: "#atproto_pds",
              type: "AtprotoPersonalDataServer",
              serviceEndpoint: `http://127.0.0.1:${upstream.port}`,
            },
          ],
        });
      if (url.pathname === "/xrpc/com.atproto.sync.getRecord") {
        if (url.searchParams.get("collection") !== "chat.wsync.chatKey")
          return new Response("", { status: 400 });
        if (!served.car) return Response.json({ error: "RecordNotFound" }, { status: 400 });
        return new Response(served.car, { headers: { "content-type": "application/vnd.ipld.car" } });
      }
      return new Response("not found", { status: 404 });
    },
  });
  t = await startTestServer({
    env: { WSYNC_ATPROTO_PLC_URL: `http://127.0.0.1:${upstream.port}`, WSYNC_ATPROTO_TIMEOUT_MS: "500" },
  });
  viewer = await person(t.url, "viewer");
  acct = await makePlcAccount();
  chat = await chatKey(acct.did, SERVER);
  // An account whose did is the ATProto DID (as sign-in with ATProto makes them).
  const row = await t.storage.accounts.byDid(viewer.session.did);
  if (!row) throw new Error("no row");
  await t.storage.accounts.create({
    ...row,
    did: acct.did,
    handle: "alice-at.test",
    email: "alice-at@example.com",
  });
  await t.storage.atproto.link({
    did: acct.did,
    handle: "alice.example",
    pdsUrl: `http://127.0.0.1:${upstream.port}`,
    linkedAt: Date.now(),
  });
  const { storage, repo } = await makeRepo(acct.did, acct.signing, chat.record);
  served.log = auditLog(acct.did, acct.ops);
  served.car = await recordCar(storage, repo);
});
afterAll(async () => {
  await t?.stop();
  upstream?.stop(true);
});

const get = (token: string | null) => (path: string) =>
  fetch(t.url + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe("atproto relay", () => {
  test("a client confirms a proof through the relay, checking every byte itself", async () => {
    const result = await checkKeyProof(
      { did: acct.did, publicKey: chat.identity.publicKey, server: SERVER },
      relaySource(get(viewer.token)),
    );
    expect(result).toMatchObject({ status: "confirmed", handle: "alice.example" });
  });

  test("a relay (or upstream) that forges a PLC operation is caught by the client", async () => {
    const attacker = await Secp256k1Keypair.create();
    const forged = await plc.updateAtprotoKeyOp(acct.ops[1] as never, attacker as never, attacker.did());
    const saved = served.log;
    served.log = auditLog(acct.did, [...acct.ops, forged]);
    try {
      const result = await checkKeyProof(
        { did: acct.did, publicKey: chat.identity.publicKey, server: SERVER },
        relaySource(get(viewer.token)),
      );
      expect(result.status).toBe("mismatch");
    } finally {
      served.log = saved;
    }
  });

  test("no record is 404 (no proof published)", async () => {
    const saved = served.car;
    served.car = null;
    try {
      const res = await get(viewer.token)(`/api/atproto/record?did=${acct.did}&rkey=${SERVER}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: "NotFound" });
    } finally {
      served.car = saved;
    }
  });

  test("signed-in callers only", async () => {
    const res = await get(null)(`/api/atproto/plc-log?did=${acct.did}`);
    expect(res.status).toBe(401);
  });

  test("only dids of accounts on this server: others are 404 and nothing is fetched", async () => {
    const before = served.hits;
    const res = await get(viewer.token)("/api/atproto/plc-log?did=did:plc:abcdefghijklmnopqrstuvwx");
    expect(res.status).toBe(404);
    expect(served.hits).toBe(before);
  });

  test("a local account (not signed in with ATProto) is 404 and nothing is fetched", async () => {
    const before = served.hits;
    const res = await get(viewer.token)(`/api/atproto/plc-log?did=${viewer.session.did}`);
    expect(res.status).toBe(404);
    expect(served.hits).toBe(before);
  });

  test("a malformed did or rkey is 422 InvalidRequest naming the field", async () => {
    const a = await get(viewer.token)("/api/atproto/plc-log?did=https://evil.example/");
    expect(a.status).toBe(422);
    expect(await a.json()).toMatchObject({
      error: "InvalidRequest",
      message: "did: not a did:plc or did:web",
    });
    const b = await get(viewer.token)(
      `/api/atproto/record?did=${acct.did}&rkey=${encodeURIComponent("../x")}`,
    );
    expect(b.status).toBe(422);
    expect(await b.json()).toMatchObject({ error: "InvalidRequest", message: "rkey: not a record key" });
  });

  test("an upstream that does not answer in time is 503 with Retry-After", async () => {
    served.hang = true;
    try {
      const res = await get(viewer.token)(`/api/atproto/plc-log?did=${acct.did}`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("10");
      expect(await res.json()).toMatchObject({ error: "Unavailable" });
    } finally {
      served.hang = false;
    }
  });

  test("the PLC URL must be https unless it is loopback", () => {
    expect(() => relayConfig({ WSYNC_ATPROTO_PLC_URL: "http://plc.example" })).toThrow("must be https");
    expect(relayConfig({}).plcUrl).toBe("https://plc.directory");
    expect(relayConfig({ WSYNC_ATPROTO_PLC_URL: "http://127.0.0.1:2582" }).allowLoopbackHttp).toBe(true);
    expect(relayConfig({ WSYNC_ATPROTO_PLC_URL: "https://plc.example" }).allowLoopbackHttp).toBe(false);
  });
});

describe("members who signed in with ATProto", () => {
  test("the member list marks them (atproto: true), so clients check their proofs; others carry no mark", async () => {
    const owner = await person(t.url, "markowner");
    const linked = await person(t.url, "marklinked");
    await t.storage.atproto.link({
      did: linked.session.did,
      handle: "marklinked.example",
      pdsUrl: "https://pds.example",
      linkedAt: Date.now(),
    });
    const { channel } = await createChannel(t.url, owner, "public", "marks");
    await ok(t.url, "joinChannel", { channelUri: channel.uri }, linked.token);
    const { members } = await ok(t.url, "getMembers", { channelUri: channel.uri }, owner.token);
    const byDid = new Map(members.map((m: { did: string; atproto?: boolean }) => [m.did, m]));
    expect(byDid.get(linked.session.did)).toMatchObject({ atproto: true });
    expect(byDid.get(owner.session.did)).not.toHaveProperty("atproto");
  });
});
