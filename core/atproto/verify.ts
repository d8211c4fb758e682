import { CHAT_KEY_NSID, checkChatKeyRecord } from "./chat-key-record.ts";
import { parseDidKey } from "./did-key.ts";
import { readDidWebDocument } from "./did-web.ts";
import { PlcLogError, type PlcState, verifyPlcAuditLog } from "./plc.ts";
import { RepoProofError, verifyRecordCar } from "./repo-proof.ts";

/**
 * Where the bytes come from (the wsync server's relay, server/atproto-relay): nothing here is taken on
 * its word, every byte is checked. Each returns null when there is nothing (404) and throws when the
 * source cannot answer.
 */
export interface ProofSource {
  /** The PLC directory's audit log of a did:plc (JSON). */
  plcLog(did: string): Promise<unknown | null>;
  /** A did:web's DID document (JSON). */
  didDocument(did: string): Promise<unknown | null>;
  /** The CAR of `com.atproto.sync.getRecord` for `chat.wsync.chatKey/{rkey}` in the did's repository. */
  record(did: string, rkey: string): Promise<Uint8Array | null>;
}

/**
 * The answer for one (did, key) pair:
 * - `confirmed`: the DID's own repository, signed by its current key, holds a proof for this key;
 * - `missing`: no proof published for this server (neutral);
 * - `mismatch`: something does not verify or names another key (a warning; the key is not pinned);
 * - `unavailable`: the bytes could not be fetched (neutral, not remembered, checked again later).
 */
export type KeyProofResult =
  | { status: "confirmed"; handle: string | null; rev: string }
  | { status: "missing" }
  | { status: "mismatch"; reason: string }
  | { status: "unavailable"; reason: string };

export async function resolveDid(did: string, source: ProofSource): Promise<PlcState | null> {
  if (did.startsWith("did:plc:")) {
    const log = await source.plcLog(did);
    return log === null ? null : verifyPlcAuditLog(did, log);
  }
  if (did.startsWith("did:web:")) {
    const doc = await source.didDocument(did);
    return doc === null ? null : readDidWebDocument(did, doc);
  }
  throw new PlcLogError("not a did:plc or did:web");
}

/**
 * Checks that `publicKey` is the chat key `did` published for `server` (a host) in its ATProto
 * repository: the DID's signing key from its verified PLC log (or did:web document), the repository
 * commit signed by that key, the tree path to `chat.wsync.chatKey/{server}`, and the record's own
 * `sig` by the chat key.
 */
export async function checkKeyProof(
  o: { did: string; publicKey: string; server: string },
  source: ProofSource,
): Promise<KeyProofResult> {
  let state: PlcState | null;
  try {
    state = await resolveDid(o.did, source);
  } catch (e) {
    if (e instanceof PlcLogError) return { status: "mismatch", reason: `DID: ${e.message}` };
    return { status: "unavailable", reason: `DID: ${(e as Error).message}` };
  }
  if (state === null) return { status: "missing" };
  if (state.tombstoned) return { status: "mismatch", reason: "DID: the DID is deactivated (tombstone)" };
  if (!state.signingKey) return { status: "mismatch", reason: "DID: the DID has no atproto signing key" };
  let signingKey: ReturnType<typeof parseDidKey>;
  try {
    signingKey = parseDidKey(state.signingKey);
  } catch (e) {
    return { status: "mismatch", reason: `DID: its signing key does not parse (${(e as Error).message})` };
  }
  let car: Uint8Array | null;
  try {
    car = await source.record(o.did, o.server);
  } catch (e) {
    return { status: "unavailable", reason: `repository: ${(e as Error).message}` };
  }
  if (car === null) return { status: "missing" };
  let record: unknown;
  let rev: string;
  try {
    const proof = verifyRecordCar(car, { did: o.did, signingKey, collection: CHAT_KEY_NSID, rkey: o.server });
    record = proof.record;
    rev = proof.rev;
  } catch (e) {
    if (e instanceof RepoProofError) return { status: "mismatch", reason: `repository: ${e.message}` };
    throw e;
  }
  if (record === null) return { status: "missing" };
  const checked = await checkChatKeyRecord(record);
  if (!checked.ok) return { status: "mismatch", reason: `record: ${checked.reason}` };
  const r = checked.record;
  if (r.did !== o.did) return { status: "mismatch", reason: "record: it names another did" };
  if (r.server !== o.server) return { status: "mismatch", reason: "record: it names another server" };
  if (r.publicKey !== o.publicKey)
    return { status: "mismatch", reason: `record: it publishes another key (fingerprint ${r.fingerprint})` };
  return { status: "confirmed", handle: state.handles[0] ?? null, rev };
}
