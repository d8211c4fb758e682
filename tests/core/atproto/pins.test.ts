/**
 * The pin hook (core/client/keys/keyring.ts + key-proofs.ts): a key of an ATProto account is pinned
 * only when its chat-key proof is not a mismatch, each key is checked at most once, and other
 * accounts are never checked. Real proofs made by the reference libraries (fixture.ts).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { ProofSource } from "../../../core/atproto/verify.ts";
import { Keyring } from "../../../core/client/keys/keyring.ts";
import { MemoryStore } from "../../../core/client/store.ts";
import { SecurityText } from "../../../core/client/view/security-text.ts";
import { auditLog, chatKey, fixedSource, makePlcAccount, makeRepo, recordCar, SERVER } from "./fixture.ts";

let alice: { did: string; key: string; log: unknown[]; car: Uint8Array };
let mallory: string;

beforeAll(async () => {
  const acct = await makePlcAccount();
  const c = await chatKey(acct.did);
  const { storage, repo } = await makeRepo(acct.did, acct.signing, c.record);
  alice = {
    did: acct.did,
    key: c.identity.publicKey,
    log: auditLog(acct.did, acct.ops),
    car: await recordCar(storage, repo),
  };
  mallory = (await chatKey(acct.did)).identity.publicKey;
});

function keyringWith(source: ProofSource): Keyring {
  const k = new Keyring(new MemoryStore());
  k.proofSource = () => ({ source, server: SERVER });
  return k;
}

describe("pinning ATProto keys", () => {
  test("a key its repository confirms is pinned, and shown as confirmed", async () => {
    const src = fixedSource({ log: alice.log, car: alice.car });
    const k = keyringWith(src);
    expect(await k.pinMany([{ did: alice.did, publicKey: alice.key, atproto: true }])).toEqual([]);
    expect(await k.pinned(alice.did)).toBe(alice.key);
    const proof = await k.proofs.known(alice.did, alice.key);
    expect(SecurityText.keyProof(proof, "alice")).toBe(
      "key confirmed by @alice.example's ATProto repository",
    );
  });

  test("a key the server offers that the repository does not name is refused like a key change", async () => {
    const k = keyringWith(fixedSource({ log: alice.log, car: alice.car }));
    expect(await k.pinMany([{ did: alice.did, publicKey: mallory, atproto: true }])).toEqual([alice.did]);
    expect(await k.pinned(alice.did)).toBeNull();
    expect(await k.pin(alice.did, mallory)).toBe("changed");
    expect(await k.pinned(alice.did)).toBeNull();
    const proof = await k.proofs.known(alice.did, mallory);
    expect(proof?.status).toBe("mismatch");
    expect(SecurityText.keyProof(proof, "alice")).toContain("does not match @alice's ATProto repository");
  });

  test("no proof published: pinned as before, shown neutrally", async () => {
    const k = keyringWith(fixedSource({ log: alice.log, car: null }));
    expect(await k.pin(alice.did, alice.key, true)).toBe("pinned");
    expect(SecurityText.keyProof(await k.proofs.known(alice.did, alice.key), "alice")).toBe(
      "no proof published",
    );
  });

  test("each key is checked at most once, even when asked for by many at the same time", async () => {
    const src = fixedSource({ log: alice.log, car: alice.car });
    const k = keyringWith(src);
    await Promise.all([
      k.pinMany([{ did: alice.did, publicKey: alice.key, atproto: true }]),
      k.proofs.check(alice.did, alice.key),
      k.proofs.check(alice.did, alice.key),
    ]);
    await k.proofs.check(alice.did, alice.key);
    expect(k.proofs.checked).toBe(1);
    expect(src.calls).toBe(2);
  });

  test("accounts that are not ATProto accounts are never checked", async () => {
    const src = fixedSource({ log: alice.log, car: alice.car });
    const k = keyringWith(src);
    expect(await k.pinMany([{ did: "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb", publicKey: alice.key }])).toEqual([]);
    expect(src.calls).toBe(0);
  });

  test("a relay that cannot answer leaves the key pinned on first use and is asked again next time", async () => {
    let up = false;
    const src: ProofSource = {
      plcLog: async () => {
        if (!up) throw new Error("relay down");
        return alice.log;
      },
      didDocument: async () => null,
      record: async () => alice.car,
    };
    const k = keyringWith(src);
    expect(await k.pin(alice.did, alice.key, true)).toBe("pinned");
    expect(await k.proofs.known(alice.did, alice.key)).toBeNull();
    up = true;
    expect((await k.proofs.check(alice.did, alice.key)).status).toBe("confirmed");
  });
});
