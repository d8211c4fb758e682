import { describe, expect, test } from "bun:test";
import { Secp256k1Keypair } from "@atproto/crypto";
import { WriteOpAction } from "@atproto/repo";
import * as plc from "@did-plc/lib";
import { CarBufferReader } from "@ipld/car/buffer-reader";
import * as CarBufferWriter from "@ipld/car/buffer-writer";
import { dagCbor } from "../../../core/atproto/cbor.ts";
import {
  CHAT_KEY_NSID,
  checkChatKeyRecord,
  makeChatKeyRecord,
} from "../../../core/atproto/chat-key-record.ts";
import { verifyPlcAuditLog } from "../../../core/atproto/plc.ts";
import { checkKeyProof } from "../../../core/atproto/verify.ts";
import { auditLog, chatKey, fixedSource, makePlcAccount, makeRepo, recordCar, SERVER } from "./fixture.ts";

async function validSetup() {
  const acct = await makePlcAccount();
  const { identity, record } = await chatKey(acct.did);
  const { storage, repo } = await makeRepo(acct.did, acct.signing, record);
  const car = await recordCar(storage, repo);
  return { acct, identity, record, storage, repo, car, log: auditLog(acct.did, acct.ops) };
}

/** Rewrites a CAR without the blocks `drop` picks (a proof with a hole in it). */
function withoutBlocks(car: Uint8Array, drop: (bytes: Uint8Array, value: unknown) => boolean): Uint8Array {
  const reader = CarBufferReader.fromBytes(car);
  const kept = reader.blocks().filter((b) => !drop(b.bytes, dagCbor.decode(b.bytes)));
  const size = kept.reduce((n, b) => n + b.bytes.length + 100, 200);
  const writer = CarBufferWriter.createWriter(new ArrayBuffer(size), { roots: reader.getRoots() });
  for (const b of kept) writer.write(b);
  return writer.close({ resize: true });
}

describe("chat.wsync.chatKey records", () => {
  test("a record made with the chat key checks; a field changed after signing does not", async () => {
    const { record } = await chatKey("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
    expect((await checkChatKeyRecord(record)).ok).toBe(true);
    const edited = { ...record, server: "other.example" };
    expect(await checkChatKeyRecord(edited)).toEqual({
      ok: false,
      reason: "the record's sig is not by its chat key",
    });
  });

  test("a record pointing at a key its author does not hold fails its sig", async () => {
    const a = await chatKey("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
    const b = await chatKey("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
    const forged = { ...a.record, publicKey: b.record.publicKey, fingerprint: b.record.fingerprint };
    expect((await checkChatKeyRecord(forged)).ok).toBe(false);
  });
});

describe("the published lexicon", () => {
  test("docs/lexicons/chat/wsync/chatKey.json requires exactly the fields the code makes and checks", async () => {
    const lexicon = await Bun.file(
      new URL("../../../docs/lexicons/chat/wsync/chatKey.json", import.meta.url),
    ).json();
    expect(lexicon.id).toBe(CHAT_KEY_NSID);
    const main = lexicon.defs.main;
    const { record } = await chatKey("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
    const fields = Object.keys(record)
      .filter((k) => k !== "$type")
      .sort();
    expect([...main.record.required].sort()).toEqual(fields);
    expect(Object.keys(main.record.properties).sort()).toEqual(fields);
    for (const f of fields)
      expect(typeof (record as unknown as Record<string, unknown>)[f]).toBe(main.record.properties[f].type);
  });
});

describe("PLC logs", () => {
  test("a genuine log gives the current atproto key, handle and PDS", async () => {
    const acct = await makePlcAccount("bob.example");
    const state = verifyPlcAuditLog(acct.did, auditLog(acct.did, acct.ops));
    expect(state.signingKey).toBe(acct.signing.did());
    expect(state.handles).toEqual(["bob.example"]);
    expect(state.pds).toBe("https://pds.example");
  });

  test("a legacy 'create' genesis (the 2023 shape) is read as the reference library normalizes it", async () => {
    const signing = await Secp256k1Keypair.create();
    const recovery = await Secp256k1Keypair.create();
    const op = await plc.deprecatedSignCreate(
      {
        type: "create",
        signingKey: signing.did(),
        recoveryKey: recovery.did(),
        handle: "old.example",
        service: "https://pds.example",
        prev: null,
      },
      signing as never,
    );
    const did = await plc.didForCreateOp(op);
    const state = verifyPlcAuditLog(did, auditLog(did, [op as never]));
    expect(state).toMatchObject({
      signingKey: signing.did(),
      rotationKeys: [recovery.did(), signing.did()],
      handles: ["old.example"],
      pds: "https://pds.example",
    });
    // The recovery key may sign the next operation.
    const next = await plc.updateHandleOp(op as never, recovery as never, "new.example");
    expect(verifyPlcAuditLog(did, auditLog(did, [op as never, next])).handles).toEqual(["new.example"]);
  });

  test("an operation signed by a key that is not a rotation key is refused", async () => {
    const acct = await makePlcAccount();
    const attacker = await Secp256k1Keypair.create();
    const forged = await plc.updateAtprotoKeyOp(acct.ops[0] as never, attacker as never, attacker.did());
    expect(() => verifyPlcAuditLog(acct.did, auditLog(acct.did, [acct.ops[0] as never, forged]))).toThrow(
      "operation 1 is not signed by a rotation key of operation 0",
    );
  });

  test("a genesis that does not hash to the did is refused", async () => {
    const a = await makePlcAccount();
    const b = await makePlcAccount();
    expect(() => verifyPlcAuditLog(a.did, auditLog(a.did, b.ops))).toThrow("does not hash to the did");
  });

  test("an operation that skips its predecessor is refused", async () => {
    const acct = await makePlcAccount();
    const later = await plc.updateHandleOp(acct.ops[1] as never, acct.rotation as never, "carol.example");
    expect(() => verifyPlcAuditLog(acct.did, auditLog(acct.did, [acct.ops[0] as never, later]))).toThrow(
      "operation 1 does not follow operation 0",
    );
  });
});

describe("checkKeyProof", () => {
  test("a valid proof confirms, with the DID's handle", async () => {
    const s = await validSetup();
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER },
      fixedSource({ log: s.log, car: s.car }),
    );
    expect(result).toMatchObject({ status: "confirmed", handle: "alice.example" });
  });

  test("a record edited behind the client's back (another key) is a mismatch", async () => {
    const s = await validSetup();
    const other = await chatKey(s.acct.did);
    const repo = await s.repo.applyWrites(
      {
        action: WriteOpAction.Update,
        collection: CHAT_KEY_NSID,
        rkey: SERVER,
        record: { ...other.record },
      } as never,
      s.acct.signing as never,
    );
    const car = await recordCar(s.storage, repo);
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER },
      fixedSource({ log: s.log, car }),
    );
    expect(result.status).toBe("mismatch");
    expect(result).toMatchObject({ reason: expect.stringContaining("publishes another key") });
  });

  test("a PLC log with a forged operation is refused, whatever the repository says", async () => {
    const s = await validSetup();
    const attacker = await Secp256k1Keypair.create();
    const forged = await plc.updateAtprotoKeyOp(s.acct.ops[1] as never, attacker as never, attacker.did());
    const { storage, repo } = await makeRepo(s.acct.did, attacker, s.record);
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER },
      fixedSource({
        log: auditLog(s.acct.did, [...s.acct.ops, forged]),
        car: await recordCar(storage, repo),
      }),
    );
    expect(result).toEqual({
      status: "mismatch",
      reason: "DID: operation 2 is not signed by a rotation key of operation 1",
    });
  });

  test("a CAR whose commit is signed by another key is refused", async () => {
    const s = await validSetup();
    const other = await Secp256k1Keypair.create();
    const { storage, repo } = await makeRepo(s.acct.did, other, s.record);
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER },
      fixedSource({ log: s.log, car: await recordCar(storage, repo) }),
    );
    expect(result).toEqual({
      status: "mismatch",
      reason: "repository: the commit is not signed by the DID's signing key",
    });
  });

  test("the repository's earlier signing key (rotated away in the PLC log) no longer proves anything", async () => {
    const acct = await makePlcAccount();
    const { record, identity } = await chatKey(acct.did);
    const genesisOnly = acct.ops[0] as { verificationMethods: { atproto: string } };
    const first = genesisOnly.verificationMethods.atproto;
    expect(first).not.toBe(acct.signing.did());
    const { storage, repo } = await makeRepo(acct.did, await Secp256k1Keypair.create(), record);
    const result = await checkKeyProof(
      { did: acct.did, publicKey: identity.publicKey, server: SERVER },
      fixedSource({ log: auditLog(acct.did, acct.ops), car: await recordCar(storage, repo) }),
    );
    expect(result.status).toBe("mismatch");
  });

  test("a record path the CAR does not prove is refused (a tree node left out)", async () => {
    const s = await validSetup();
    const isNode = (v: unknown) => typeof v === "object" && v !== null && "e" in v && "l" in v;
    // Leave out the deepest node on the path: the one that holds the record's entry.
    const reader = CarBufferReader.fromBytes(s.car);
    const nodes = reader.blocks().filter((b) => isNode(dagCbor.decode(b.bytes)));
    expect(nodes.length).toBeGreaterThan(1);
    const last = nodes.find((b) =>
      (dagCbor.decode(b.bytes) as { e: { k: Uint8Array }[] }).e.some((e) =>
        new TextDecoder().decode(e.k).includes(SERVER),
      ),
    );
    expect(last).toBeDefined();
    const holed = withoutBlocks(
      s.car,
      (bytes) =>
        bytes === last?.bytes ||
        (bytes.every((x, i) => x === last?.bytes[i]) && bytes.length === last?.bytes.length),
    );
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER },
      fixedSource({ log: s.log, car: holed }),
    );
    expect(result).toEqual({ status: "mismatch", reason: "repository: the CAR lacks the tree node block" });
  });

  test("a CAR proving another path does not prove this one", async () => {
    const s = await validSetup();
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: s.identity.publicKey, server: "other.example" },
      fixedSource({ log: s.log, car: s.car }),
    );
    // The tree either lacks the blocks of that path or proves nothing is there: never a confirmation.
    expect(result.status === "mismatch" || result.status === "missing").toBe(true);
    expect(result.status).not.toBe("confirmed");
  });

  test("a record block swapped for another one with the same CID claim does not hash and is refused", async () => {
    const s = await validSetup();
    const reader = CarBufferReader.fromBytes(s.car);
    const rec = reader
      .blocks()
      .find((b) => (dagCbor.decode(b.bytes) as { $type?: string }).$type === CHAT_KEY_NSID);
    expect(rec).toBeDefined();
    const other = await chatKey(s.acct.did);
    const size = s.car.length + 1000;
    const writer = CarBufferWriter.createWriter(new ArrayBuffer(size), { roots: reader.getRoots() });
    for (const b of reader.blocks())
      writer.write(b === rec ? { cid: b.cid, bytes: dagCbor.encode({ ...other.record }) } : b);
    const result = await checkKeyProof(
      { did: s.acct.did, publicKey: other.identity.publicKey, server: SERVER },
      fixedSource({ log: s.log, car: writer.close({ resize: true }) }),
    );
    expect(result).toEqual({
      status: "mismatch",
      reason: "repository: the record block does not hash to its CID",
    });
  });

  test("no record (the tree proves the path empty) and no repository answer are both 'missing'", async () => {
    const acct = await makePlcAccount();
    const { identity } = await chatKey(acct.did);
    const { storage, repo } = await makeRepo(acct.did, acct.signing, null);
    const log = auditLog(acct.did, acct.ops);
    const input = { did: acct.did, publicKey: identity.publicKey, server: SERVER };
    expect(await checkKeyProof(input, fixedSource({ log, car: await recordCar(storage, repo) }))).toEqual({
      status: "missing",
    });
    expect(await checkKeyProof(input, fixedSource({ log, car: null }))).toEqual({ status: "missing" });
  });

  test("a source that cannot answer is 'unavailable', not a verdict", async () => {
    const acct = await makePlcAccount();
    const result = await checkKeyProof(
      { did: acct.did, publicKey: "x", server: SERVER },
      {
        plcLog: async () => {
          throw new Error("503");
        },
        didDocument: async () => null,
        record: async () => null,
      },
    );
    expect(result).toEqual({ status: "unavailable", reason: "DID: 503" });
  });

  test("did:web: the document's #atproto key must sign the commit", async () => {
    const did = "did:web:alice.example";
    const key = await Secp256k1Keypair.create();
    const { identity, record } = await chatKey(did);
    const { storage, repo } = await makeRepo(did, key, record);
    const car = await recordCar(storage, repo);
    const doc = (k: Secp256k1Keypair) => ({
      id: did,
      alsoKnownAs: ["at://alice.example"],
      verificationMethod: [
        { id: `${did}#atproto`, type: "Multikey", controller: did, publicKeyMultibase: k.did().slice(8) },
      ],
      service: [
        { id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: "https://pds.example" },
      ],
    });
    const input = { did, publicKey: identity.publicKey, server: SERVER };
    expect(await checkKeyProof(input, fixedSource({ doc: doc(key), car }))).toMatchObject({
      status: "confirmed",
      handle: "alice.example",
    });
    const other = await Secp256k1Keypair.create();
    expect((await checkKeyProof(input, fixedSource({ doc: doc(other), car }))).status).toBe("mismatch");
  });

  test("makeChatKeyRecord names the server by host", async () => {
    const { identity } = await chatKey("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa");
    const r = await makeChatKeyRecord(identity, { server: "https://Chat.Example:8443/x", did: "did:plc:x" });
    expect(r.server).toBe("chat.example:8443");
  });

  test("high-S signatures (a re-shaped valid signature) are refused, in PLC operations and commits alike", async () => {
    const { secp256k1 } = await import("@noble/curves/secp256k1.js");
    const { base64url } = await import("multiformats/bases/base64");
    const { cidOfBytes } = await import("../../../core/atproto/cbor.ts");
    const n = secp256k1.Point.Fn.ORDER;
    const highS = (sig: Uint8Array) => {
      const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
      const s2 = n - BigInt(`0x${hex(sig.subarray(32))}`);
      const out = new Uint8Array(sig);
      out.set(
        Uint8Array.from(s2.toString(16).padStart(64, "0").match(/../g) ?? [], (h) => Number.parseInt(h, 16)),
        32,
      );
      return out;
    };
    const s = await validSetup();
    const input = { did: s.acct.did, publicKey: s.identity.publicKey, server: SERVER };
    // The PLC update with its signature's high-S twin (valid ECDSA, not valid ATProto).
    const update = { ...(s.acct.ops[1] as Record<string, unknown>) };
    update.sig = base64url.baseEncode(highS(base64url.baseDecode(update.sig as string)));
    const log = auditLog(s.acct.did, [s.acct.ops[0] as Record<string, unknown>, update]);
    expect(await checkKeyProof(input, fixedSource({ log, car: s.car }))).toEqual({
      status: "mismatch",
      reason: "DID: operation 1 is not signed by a rotation key of operation 0",
    });
    // The repository commit with a high-S signature: a new root block, refused.
    const reader = CarBufferReader.fromBytes(s.car);
    const root = reader.getRoots()[0];
    const commit = dagCbor.decode(reader.get(root as never)?.bytes as Uint8Array) as Record<string, unknown>;
    const bytes = dagCbor.encode({ ...commit, sig: highS(commit.sig as Uint8Array) });
    const cid = cidOfBytes(bytes);
    const writer = CarBufferWriter.createWriter(new ArrayBuffer(s.car.length + 1000), {
      roots: [cid as never],
    });
    writer.write({ cid: cid as never, bytes });
    for (const b of reader.blocks()) if (!b.cid.equals(root)) writer.write(b);
    expect(
      await checkKeyProof(input, fixedSource({ log: s.log, car: writer.close({ resize: true }) })),
    ).toEqual({
      status: "mismatch",
      reason: "repository: the commit is not signed by the DID's signing key",
    });
  });
});
