import { CarBufferReader } from "@ipld/car/buffer-reader";
import { bytesMatchCid, CID, dagCbor } from "./cbor.ts";
import { type DidKey, verifyAtprotoSignature } from "./did-key.ts";

/** A CAR that does not prove what it should; `message` names the check. */
export class RepoProofError extends Error {
  override readonly name = "RepoProofError";
}

/** What a verified `com.atproto.sync.getRecord` CAR proves: the record at the path, or that there is none. */
export interface RepoProof {
  /** The signed commit's revision. */
  rev: string;
  /** The record (DAG-CBOR decoded), or null when the MST proves the path holds nothing. */
  record: unknown | null;
}

interface Blocks {
  get(cid: CID): Uint8Array | undefined;
}

function block(blocks: Blocks, cid: CID, what: string): unknown {
  const bytes = blocks.get(cid);
  if (!bytes) throw new RepoProofError(`the CAR lacks the ${what} block`);
  if (!bytesMatchCid(cid, bytes)) throw new RepoProofError(`the ${what} block does not hash to its CID`);
  try {
    return dagCbor.decode(bytes);
  } catch {
    throw new RepoProofError(`the ${what} block is not DAG-CBOR`);
  }
}

const asCid = (v: unknown): CID | null => CID.asCID(v) ?? null;

function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

/**
 * Walks the repository's Merkle search tree from `root` toward `key` (`collection/rkey`): a node is
 * `{l, e: [{p, k, v, t}]}`, each entry's key its `p` leading bytes of the previous key followed by
 * `k`; keys sort bytewise, `l` holds the keys before the first entry and each `t` those between its
 * entry and the next. Every node on the way must be in the CAR and hash to its CID.
 */
function lookup(blocks: Blocks, root: CID, key: Uint8Array): CID | null {
  let node: CID | null = root;
  for (let depth = 0; node !== null; depth++) {
    if (depth > 64) throw new RepoProofError("the tree is deeper than any repository's");
    const n = block(blocks, node, "tree node") as { l?: unknown; e?: unknown };
    if (typeof n !== "object" || n === null || !Array.isArray(n.e))
      throw new RepoProofError("a tree node has no entries");
    let next: CID | null = n.l === null || n.l === undefined ? null : asCid(n.l);
    if (n.l !== null && n.l !== undefined && !next) throw new RepoProofError("a tree node's l is not a CID");
    let prevKey = new Uint8Array(0);
    let found: CID | null = null;
    for (const raw of n.e as unknown[]) {
      const e = raw as { p?: unknown; k?: unknown; v?: unknown; t?: unknown };
      if (typeof e.p !== "number" || !(e.k instanceof Uint8Array) || e.p > prevKey.length)
        throw new RepoProofError("a tree entry is malformed");
      const full = new Uint8Array(e.p + e.k.length);
      full.set(prevKey.subarray(0, e.p));
      full.set(e.k, e.p);
      if (prevKey.length > 0 && compare(full, prevKey) <= 0)
        throw new RepoProofError("a tree node's keys are out of order");
      prevKey = full;
      const c = compare(key, full);
      if (c === 0) {
        found = asCid(e.v);
        if (!found) throw new RepoProofError("a tree entry's value is not a CID");
        break;
      }
      if (c < 0) break;
      next = e.t === null || e.t === undefined ? null : asCid(e.t);
      if (e.t !== null && e.t !== undefined && !next)
        throw new RepoProofError("a tree entry's t is not a CID");
    }
    if (found) return found;
    node = next;
  }
  return null;
}

/**
 * Verifies the CAR that `com.atproto.sync.getRecord` returns for `collection/rkey` of `did`: its root
 * is a commit for that did signed by `signingKey` (over the DAG-CBOR of the commit without `sig`), and
 * the tree the commit names leads to the record (or proves there is none). Throws RepoProofError.
 */
export function verifyRecordCar(
  car: Uint8Array,
  o: { did: string; signingKey: DidKey; collection: string; rkey: string },
): RepoProof {
  let reader: CarBufferReader;
  try {
    reader = CarBufferReader.fromBytes(car);
  } catch {
    throw new RepoProofError("the bytes are not a CAR file");
  }
  const roots = reader.getRoots();
  if (roots.length !== 1 || !roots[0]) throw new RepoProofError("the CAR does not have one root");
  const blocks: Blocks = { get: (cid) => reader.get(cid)?.bytes };
  const commit = block(blocks, roots[0], "commit") as Record<string, unknown>;
  if (typeof commit !== "object" || commit === null) throw new RepoProofError("the root is not a commit");
  if (commit.version !== 3 && commit.version !== 2)
    throw new RepoProofError("the commit's version is not 2 or 3");
  if (commit.did !== o.did) throw new RepoProofError("the commit is for another did");
  if (typeof commit.rev !== "string") throw new RepoProofError("the commit has no rev");
  const data = asCid(commit.data);
  if (!data) throw new RepoProofError("the commit's data is not a CID");
  if (!(commit.sig instanceof Uint8Array)) throw new RepoProofError("the commit is not signed");
  const { sig, ...unsigned } = commit;
  if (!verifyAtprotoSignature(o.signingKey, dagCbor.encode(unsigned), sig))
    throw new RepoProofError("the commit is not signed by the DID's signing key");
  const value = lookup(blocks, data, new TextEncoder().encode(`${o.collection}/${o.rkey}`));
  if (!value) return { rev: commit.rev, record: null };
  return { rev: commit.rev, record: block(blocks, value, "record") };
}
