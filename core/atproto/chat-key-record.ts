import type { Identity } from "../crypto/identity.ts";
import { fingerprint, signObject, verifyObject } from "../crypto/index.ts";

/**
 * The lexicon of a chat-key proof (docs/lexicons/chat/wsync/chatKey.json): one record per wsync
 * server in the user's own ATProto repository, at `chat.wsync.chatKey/{server host}`. Its `sig` is made
 * by the chat key itself over the rest, so a record cannot point at a key its owner does not hold.
 * The namespace is the protocol's own (`chat.wsync.channel`, `chat.wsync.message`: protocol §1).
 */
export const CHAT_KEY_NSID = "chat.wsync.chatKey";

/** The record as stored (DAG-CBOR in the repository; every field a string). */
export interface ChatKeyRecord {
  $type: typeof CHAT_KEY_NSID;
  /** The wsync server's host, as in its public URL (lowercase, with a port when it has one). */
  server: string;
  did: string;
  /** hex(SHA-256(raw public key))[0..32) (protocol §5). */
  fingerprint: string;
  /** base64 of the 65-byte uncompressed P-256 point (protocol §5). */
  publicKey: string;
  /** ISO 8601 date-time. */
  createdAt: string;
  /** base64 of ECDSA P-256/SHA-256 (64-byte r‖s) by the chat key over utf8(canon(record without sig)). */
  sig: string;
}

const FIELDS = ["$type", "createdAt", "did", "fingerprint", "publicKey", "server", "sig"];
const HOST = /^[a-z0-9.-]+(:[0-9]{1,5})?$/;

/** The record key of a server's proof: its host (lowercased), the same string as `server`. */
export function chatKeyRkey(publicUrlOrHost: string): string {
  const host = publicUrlOrHost.includes("://") ? new URL(publicUrlOrHost).host : publicUrlOrHost;
  const h = host.toLowerCase();
  if (!HOST.test(h) || h.length > 253) throw new Error(`Not a server host: ${publicUrlOrHost}`);
  return h;
}

/** What the signature covers: every field but `sig`, as canon JSON (protocol §5's `canon`). */
export function unsignedChatKey(r: Omit<ChatKeyRecord, "sig">): Omit<ChatKeyRecord, "sig"> {
  return {
    $type: CHAT_KEY_NSID,
    server: r.server,
    did: r.did,
    fingerprint: r.fingerprint,
    publicKey: r.publicKey,
    createdAt: r.createdAt,
  };
}

/** Makes and signs the record for this identity's public key, to be put in the user's repository. */
export async function makeChatKeyRecord(
  identity: Identity,
  o: { server: string; did: string; createdAt?: Date },
): Promise<ChatKeyRecord> {
  const unsigned = unsignedChatKey({
    $type: CHAT_KEY_NSID,
    server: chatKeyRkey(o.server),
    did: o.did,
    fingerprint: await fingerprint(identity.publicKey),
    publicKey: identity.publicKey,
    createdAt: (o.createdAt ?? new Date()).toISOString(),
  });
  return { ...unsigned, sig: await signObject(identity, unsigned) };
}

export type RecordCheck = { ok: true; record: ChatKeyRecord } | { ok: false; reason: string };

/**
 * Checks a record read from a repository: its shape, that its fingerprint is its key's, and that its
 * `sig` is by that key. Whether it names the expected did, server and key is the caller's to compare.
 */
export async function checkChatKeyRecord(value: unknown): Promise<RecordCheck> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, reason: "the record is not an object" };
  const r = value as Record<string, unknown>;
  const keys = Object.keys(r).sort();
  if (keys.length !== FIELDS.length || keys.some((k, i) => k !== FIELDS[i]))
    return { ok: false, reason: `the record's fields are not ${FIELDS.join(", ")}` };
  for (const k of FIELDS)
    if (typeof r[k] !== "string") return { ok: false, reason: `the record's ${k} is not a string` };
  if (r.$type !== CHAT_KEY_NSID) return { ok: false, reason: `the record is not a ${CHAT_KEY_NSID}` };
  const record = r as unknown as ChatKeyRecord;
  if (Number.isNaN(Date.parse(record.createdAt)))
    return { ok: false, reason: "the record's createdAt is not a date" };
  const fp = await fingerprint(record.publicKey).catch(() => null);
  if (fp === null) return { ok: false, reason: "the record's publicKey is not a P-256 key" };
  if (fp !== record.fingerprint) return { ok: false, reason: "the record's fingerprint is not its key's" };
  if (!(await verifyObject(unsignedChatKey(record), record.sig, record.publicKey)))
    return { ok: false, reason: "the record's sig is not by its chat key" };
  return { ok: true, record };
}
