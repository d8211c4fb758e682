import { API_BASE } from "./routes.ts";

/**
 * The chat-key proof relay (server/atproto-relay, docs/protocol-extensions.md "ATProto key proofs"):
 * GET, signed in, query `did` (and `rkey` for the record). 200 with the upstream bytes as they are,
 * 404 when nothing is published, 422 for a malformed did or rkey, 503 with Retry-After when the
 * PLC directory, did:web host or PDS cannot be reached.
 */
export const AtprotoRelayPaths = {
  /** A did:plc's PLC audit log (JSON). */
  plcLog: `${API_BASE}/atproto/plc-log`,
  /** A did:web's DID document (JSON). */
  didDoc: `${API_BASE}/atproto/did-doc`,
  /** The CAR of com.atproto.sync.getRecord for chat.wsync.chatKey/{rkey}. */
  record: `${API_BASE}/atproto/record`,
} as const;
