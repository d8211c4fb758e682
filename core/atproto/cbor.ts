import * as dagCbor from "@ipld/dag-cbor";
import { sha256 } from "@noble/hashes/sha2.js";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";

/** DAG-CBOR's multicodec, and SHA-256's multihash code (the only ones ATProto's CIDs use here). */
export const DAG_CBOR = 0x71;
const SHA2_256 = 0x12;

export { CID, dagCbor };

/** The CIDv1 (dag-cbor, sha-256) of bytes, computed synchronously. */
export function cidOfBytes(bytes: Uint8Array): CID {
  return CID.createV1(DAG_CBOR, Digest.create(SHA2_256, sha256(bytes)));
}

/** The CID a value has once DAG-CBOR encoded. */
export function cidOf(value: unknown): CID {
  return cidOfBytes(dagCbor.encode(value));
}

/** True when `bytes` hash to `cid` (a block from a CAR is never taken on the CAR's word). */
export function bytesMatchCid(cid: CID, bytes: Uint8Array): boolean {
  if (cid.multihash.code !== SHA2_256) return false;
  const d = sha256(bytes);
  const want = cid.multihash.digest;
  if (want.length !== d.length) return false;
  let diff = 0;
  for (let i = 0; i < d.length; i++) diff |= (d[i] as number) ^ (want[i] as number);
  return diff === 0;
}
