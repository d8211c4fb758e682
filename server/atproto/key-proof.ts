import type { NodeOAuthClient, OAuthSession } from "@atproto/oauth-client-node";
import type { Elysia } from "elysia";
import { CHAT_KEY_NSID, chatKeyRkey, checkChatKeyRecord } from "../../core/atproto/chat-key-record.ts";
import { AtprotoProofPaths } from "../../core/protocol/atproto-proof.ts";
import { ApiError } from "../../core/protocol/index.ts";
import type { Services } from "../services/services.ts";

/** How long one call to the PDS may take. */
const PDS_TIMEOUT_MS = 10_000;

export interface KeyProofDeps {
  client: () => Promise<NodeOAuthClient>;
  publicUrl: () => string;
}

const sessionRequired = (why: string) =>
  new ApiError("AtprotoSessionRequired", `Sign in with ATProto again to publish your key proof: ${why}`);

/**
 * The caller's chat-key proof in their own ATProto repository (docs/protocol-extensions.md "ATProto
 * key proofs"): the client signs the record with its chat key, this server (the OAuth client, holding
 * the tokens) checks it and writes it with com.atproto.repo.putRecord at chat.wsync.chatKey/{host}.
 * Before writing: the record is well formed and its sig is by its key, its did is the caller's, its
 * server is this one, and its key is the caller's registered chat key here.
 */
export class KeyProofService {
  constructor(
    private readonly s: Services,
    private readonly d: KeyProofDeps,
  ) {}

  private async caller(authorization: string | null): Promise<{ did: string; publicKey: string | null }> {
    const ctx = await this.s.auth.authenticate(authorization);
    await this.s.limits.check(ctx.did, "proof");
    if (!(await this.s.storage.atproto.byDid(ctx.did)))
      throw new ApiError(
        "Forbidden",
        "Only an account signed in with ATProto has a repository to publish in",
      );
    const account = await this.s.storage.accounts.byDid(ctx.did);
    if (!account) throw new ApiError("Unauthorized", "No such account");
    return { did: ctx.did, publicKey: account.publicKey };
  }

  private async session(did: string): Promise<OAuthSession> {
    try {
      return await (await this.d.client()).restore(did);
    } catch (e) {
      throw sessionRequired((e as Error).message);
    }
  }

  /** Calls an XRPC procedure of the caller's PDS through the OAuth session (DPoP-bound token). */
  private async xrpc(session: OAuthSession, nsid: string, body: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await session.fetchHandler(`/xrpc/${nsid}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(PDS_TIMEOUT_MS),
      });
    } catch (e) {
      // The library refreshes the tokens when needed; a refresh refused means the grant is gone.
      if (/revoked|invalid|refresh/i.test((e as Error).name + (e as Error).message))
        throw sessionRequired((e as Error).message);
      throw new ApiError("Unavailable", "Your PDS could not be reached", 10);
    }
    const answer = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
    if (res.ok) return answer;
    if (res.status === 401 || res.status === 403)
      throw sessionRequired(answer?.message ?? answer?.error ?? `the PDS answered ${res.status}`);
    if (res.status >= 500) throw new ApiError("Unavailable", `Your PDS answered ${res.status}`, 10);
    throw new ApiError(
      "InvalidRequest",
      `Your PDS refused the record: ${answer?.message ?? answer?.error ?? res.status}`,
    );
  }

  async put(authorization: string | null, body: unknown): Promise<{ uri: string; cid: string }> {
    const me = await this.caller(authorization);
    const value = (body as { record?: unknown } | null)?.record;
    const checked = await checkChatKeyRecord(value);
    if (!checked.ok) throw new ApiError("InvalidRequest", `record: ${checked.reason}`);
    const r = checked.record;
    const host = chatKeyRkey(this.d.publicUrl());
    if (r.did !== me.did) throw new ApiError("InvalidRequest", "record: its did is not yours");
    if (r.server !== host) throw new ApiError("InvalidRequest", `record: its server is not ${host}`);
    if (me.publicKey === null || r.publicKey !== me.publicKey)
      throw new ApiError("InvalidRequest", "record: its key is not your chat key on this server");
    const session = await this.session(me.did);
    const answer = (await this.xrpc(session, "com.atproto.repo.putRecord", {
      repo: me.did,
      collection: CHAT_KEY_NSID,
      rkey: host,
      record: r,
      // The PDS has no schema for this lexicon: it stores the record as it is.
      validate: false,
    })) as { uri?: unknown; cid?: unknown } | null;
    return { uri: String(answer?.uri ?? ""), cid: String(answer?.cid ?? "") };
  }

  async remove(authorization: string | null): Promise<Record<string, never>> {
    const me = await this.caller(authorization);
    const session = await this.session(me.did);
    await this.xrpc(session, "com.atproto.repo.deleteRecord", {
      repo: me.did,
      collection: CHAT_KEY_NSID,
      rkey: chatKeyRkey(this.d.publicUrl()),
    });
    return {};
  }

  /**
   * Before the account of `did` is deleted by its owner (Services.beforeAccountDeletion): its proof
   * leaves its repository, and the PDS's tokens this server holds for it are revoked (the library's
   * signOut), so nothing of the deleted account can still write there. Best effort: a PDS that cannot
   * be reached does not keep anyone from deleting their account.
   */
  async removeFor(did: string): Promise<void> {
    if (!(await this.s.storage.atproto.byDid(did))) return;
    const session = await this.session(did);
    try {
      await this.xrpc(session, "com.atproto.repo.deleteRecord", {
        repo: did,
        collection: CHAT_KEY_NSID,
        rkey: chatKeyRkey(this.d.publicUrl()),
      });
    } finally {
      await session.signOut();
    }
  }
}

export function mountKeyProof(app: Elysia, svc: KeyProofService): void {
  app.put(AtprotoProofPaths.keyProof, async ({ request, body, set }) => {
    set.headers["cache-control"] = "no-store";
    return svc.put(request.headers.get("authorization"), body);
  });
  app.delete(AtprotoProofPaths.keyProof, async ({ request, set }) => {
    set.headers["cache-control"] = "no-store";
    return svc.remove(request.headers.get("authorization"));
  });
}
