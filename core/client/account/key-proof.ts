import { makeChatKeyRecord } from "../../atproto/chat-key-record.ts";
import type { Identity } from "../../crypto/identity.ts";
import { AtprotoProofPaths } from "../../protocol/atproto-proof.ts";
import { ApiError, isErrorBody } from "../../protocol/runtime.ts";
import { type KeyProofHost, PROOF_PUBLISHED } from "./auth-types.ts";

async function send(h: KeyProofHost, method: "PUT" | "DELETE", body?: unknown): Promise<void> {
  const token = await h.token();
  if (!token) throw new ApiError("Unauthorized", "Not signed in");
  const res = await h.fetch(`${h.baseUrl.replace(/\/+$/, "")}${AtprotoProofPaths.keyProof}`, {
    method,
    headers: {
      ...h.headers,
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.ok) return;
  const answer = await res.json().catch(() => null);
  if (isErrorBody(answer)) throw new ApiError(answer.error, answer.message);
  throw new ApiError("InternalError", `the server answered ${res.status}`);
}

/**
 * Publishes this account's chat key in its ATProto repository (issue 33): the record is signed here
 * with the chat key, the server checks it and writes it through its OAuth session. Once per key on
 * this device; a new key (a key change) is published again, replacing the record.
 */
export async function publishKeyProof(h: KeyProofHost, did: string, identity: Identity): Promise<boolean> {
  const note = `${did} ${identity.publicKey}`;
  if ((await h.store.get(PROOF_PUBLISHED)) === note) return false;
  const record = await makeChatKeyRecord(identity, { server: h.baseUrl, did });
  await send(h, "PUT", { record });
  await h.store.set(PROOF_PUBLISHED, note);
  return true;
}

/** Removes the record (the key is being deleted with its last copy: a logout that destroys it). */
export async function removeKeyProof(h: KeyProofHost): Promise<void> {
  await send(h, "DELETE");
  await h.store.delete(PROOF_PUBLISHED);
}
