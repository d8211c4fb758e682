import { API_BASE } from "./routes.ts";

/**
 * Publishing the caller's chat-key proof in their ATProto repository (docs/protocol-extensions.md
 * "ATProto key proofs"). The client signs the record with its chat key (core/atproto/chat-key-record.ts);
 * the server, which holds the OAuth session, checks it and writes it with com.atproto.repo.putRecord.
 *   PUT    keyProof  {record}  → {uri, cid}
 *   DELETE keyProof           → {}
 */
export const AtprotoProofPaths = {
  keyProof: `${API_BASE}/atproto/key-proof`,
} as const;
