// Real ATProto data made by the tests: PLC operations signed by the reference library (@did-plc/lib)
// with secp256k1 keys (@atproto/crypto), and repositories built by the reference implementation
// (@atproto/repo), whose getRecord CARs the verifier under test must accept or refuse.
import { Secp256k1Keypair } from "@atproto/crypto";
import { getRecords, MemoryBlockstore, type RecordWriteOp, Repo, WriteOpAction } from "@atproto/repo";
import * as plc from "@did-plc/lib";
import { cidOf } from "../../../core/atproto/cbor.ts";
import {
  CHAT_KEY_NSID,
  type ChatKeyRecord,
  makeChatKeyRecord,
} from "../../../core/atproto/chat-key-record.ts";
import type { ProofSource } from "../../../core/atproto/verify.ts";
import { generateIdentity, importIdentity } from "../../../core/crypto/identity.ts";

export const SERVER = "chat.example:8443";

export interface PlcAccount {
  did: string;
  rotation: Secp256k1Keypair;
  /** The repository's current signing key (after the rotation below). */
  signing: Secp256k1Keypair;
  ops: Record<string, unknown>[];
}

/** A did:plc with a genesis operation and one update that moves the atproto key to a new one. */
export async function makePlcAccount(handle = "alice.example"): Promise<PlcAccount> {
  const rotation = await Secp256k1Keypair.create({ exportable: true });
  const first = await Secp256k1Keypair.create({ exportable: true });
  const { op, did } = await plc.createOp({
    signingKey: first.did(),
    handle,
    pds: "https://pds.example",
    rotationKeys: [rotation.did()],
    signer: rotation as never,
  });
  const signing = await Secp256k1Keypair.create({ exportable: true });
  const update = await plc.updateAtprotoKeyOp(op, rotation as never, signing.did());
  return { did, rotation, signing, ops: [op, update] };
}

export function auditLog(did: string, ops: Record<string, unknown>[]): unknown[] {
  return ops.map((operation, i) => ({
    did,
    operation,
    cid: cidOf(operation).toString(),
    nullified: false,
    createdAt: new Date(Date.UTC(2026, 10, 1 + i)).toISOString(),
  }));
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A repository with some unrelated records (so the tree has depth) and, if given, the proof record. */
export async function makeRepo(
  did: string,
  key: Secp256k1Keypair,
  record: ChatKeyRecord | null,
  rkey = SERVER,
): Promise<{ storage: MemoryBlockstore; repo: Repo }> {
  const storage = new MemoryBlockstore();
  const writes: RecordWriteOp[] = [];
  for (let i = 0; i < 60; i++)
    writes.push({
      action: WriteOpAction.Create,
      collection: i % 2 ? "app.bsky.feed.post" : "app.bsky.feed.like",
      rkey: `3k${String(i).padStart(11, "0")}`,
      record: {
        $type: i % 2 ? "app.bsky.feed.post" : "app.bsky.feed.like",
        text: `n${i}`,
        createdAt: "2026-11-01T00:00:00.000Z",
      },
    });
  if (record)
    writes.push({ action: WriteOpAction.Create, collection: CHAT_KEY_NSID, rkey, record: { ...record } });
  const repo = await Repo.create(storage, did, key as never, writes as never);
  return { storage, repo };
}

export async function recordCar(
  storage: MemoryBlockstore,
  repo: Repo,
  rkey = SERVER,
): Promise<Uint8Array<ArrayBuffer>> {
  return collect(getRecords(storage, repo.cid, [{ collection: CHAT_KEY_NSID, rkey }]));
}

export async function chatKey(did: string, server = SERVER) {
  const g = await generateIdentity();
  const identity = await importIdentity(g.privateKey);
  return { identity, record: await makeChatKeyRecord(identity, { server, did }) };
}

/** A ProofSource over fixed bytes, counting its calls. */
export function fixedSource(o: {
  log?: unknown | null;
  doc?: unknown | null;
  car?: Uint8Array | null;
}): ProofSource & { calls: number } {
  const s = {
    calls: 0,
    plcLog: async () => {
      s.calls++;
      return o.log ?? null;
    },
    didDocument: async () => {
      s.calls++;
      return o.doc ?? null;
    },
    record: async () => {
      s.calls++;
      return o.car ?? null;
    },
  };
  return s;
}
