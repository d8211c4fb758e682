import type { NodeOAuthClient } from "@atproto/oauth-client-node";
import { ApiError, type Session } from "../../core/protocol/index.ts";
import type { AuthService } from "../services/auth-service.ts";
import { hashPassword } from "../services/passwords.ts";
import { type AccountRow, DuplicateError, type Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { randomBase64Url } from "../util/ids.ts";
import { isLoopbackUrl } from "./config.ts";
import { SCOPE } from "./oauth.ts";

/** The handle syntax of ATProto (a domain name of at least two labels). */
const HANDLE_RE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why a sign-in was refused, for the callback page; never a secret. */
export class AtprotoSignInError extends ApiError {
  constructor(message: string) {
    super("Unauthorized", message);
  }
}

export interface AtprotoServiceDeps {
  client: NodeOAuthClient;
  storage: Storage;
  auth: AuthService;
  clock: Clock;
  publicUrl: string;
}

/** What the server remembers about one authorization request, beside the library's own state. */
interface Pending {
  handle: string;
  did: string;
}

/**
 * "Sign in with ATProto" (docs/atproto.md): resolves and checks the handle, sends the user to their PDS
 * (the library does PAR, PKCE and DPoP), and on the callback finds or makes the wsync account whose did
 * is the ATProto DID and whose handle is the verified ATProto handle.
 */
export class AtprotoService {
  constructor(private readonly d: AtprotoServiceDeps) {}

  /** The public keys of the client's signing key (none for a loopback client). */
  jwks(): unknown {
    try {
      return this.d.client.jwks;
    } catch {
      return { keys: [] };
    }
  }

  /** Step 1: the URL of the PDS's authorization page for this handle. */
  async login(input: unknown): Promise<{ url: string }> {
    const raw = (input as { handle?: unknown } | null)?.handle;
    if (typeof raw !== "string") throw new ApiError("InvalidRequest", "handle: expected a string");
    const handle = raw.trim().replace(/^@/, "").toLowerCase();
    if (handle.length > 253 || !HANDLE_RE.test(handle))
      throw new ApiError("InvalidRequest", "handle: expected an ATProto handle such as alice.bsky.social");
    // Handle → DID → DID document whose alsoKnownAs names the handle (the library refuses otherwise).
    let identity: Awaited<ReturnType<NodeOAuthClient["identityResolver"]["resolve"]>>;
    try {
      identity = await this.d.client.identityResolver.resolve(handle);
    } catch (e) {
      throw new ApiError("NotFound", `Could not resolve the handle ${handle}: ${(e as Error).message}`);
    }
    if (identity.handle !== handle)
      throw new ApiError("NotFound", `The DID document of ${identity.did} does not name ${handle}`);
    const pds = identity.didDoc.service?.find(
      (s) => s.id === "#atproto_pds" || s.id.endsWith("#atproto_pds"),
    );
    const endpoint = typeof pds?.serviceEndpoint === "string" ? pds.serviceEndpoint : null;
    if (!endpoint) throw new ApiError("NotFound", `${handle} names no PDS`);
    this.checkPdsUrl(endpoint);
    // Requests never completed leave rows behind: each new one clears those that expired.
    await this.d.storage.atproto.purgeExpired(this.d.clock.now());
    const key = randomBase64Url(24);
    const pending: Pending = { handle, did: identity.did };
    await this.d.storage.atproto.set(
      "pending",
      key,
      JSON.stringify(pending),
      this.d.clock.now() + 10 * 60_000,
    );
    try {
      const url = await this.d.client.authorize(handle, { scope: SCOPE, state: key });
      return { url: url.href };
    } catch (e) {
      throw new ApiError(
        "Unavailable",
        `The PDS of ${handle} refused the authorization request: ${(e as Error).message}`,
      );
    }
  }

  /** An http PDS only while wsync itself runs on loopback (development, tests). */
  checkPdsUrl(url: string): void {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new ApiError("InvalidRequest", "The PDS URL is not a URL");
    }
    if (u.protocol === "https:") return;
    if (u.protocol === "http:" && isLoopbackUrl(this.d.publicUrl)) return;
    throw new ApiError("InvalidRequest", `Refusing the PDS at ${u.origin}: not https`);
  }

  /** Step 2: the PDS sent the browser back. Gives the wsync session of the ATProto account. */
  async callback(params: URLSearchParams): Promise<Session> {
    let result: Awaited<ReturnType<NodeOAuthClient["callback"]>>;
    try {
      // The library takes its state once (stores in oauth.ts), checks the issuer, swaps the code with
      // PKCE and DPoP, and checks that the token's `sub` is served by that issuer.
      result = await this.d.client.callback(params);
    } catch (e) {
      throw new AtprotoSignInError(`ATProto sign-in failed: ${(e as Error).message}`);
    }
    const key = result.state;
    const pendingText = key ? await this.d.storage.atproto.take("pending", key, this.d.clock.now()) : null;
    const did = result.session.did;
    if (!pendingText) {
      await this.d.client.revoke(did).catch(() => {});
      throw new AtprotoSignInError("ATProto sign-in failed: unknown or used request");
    }
    const pending = JSON.parse(pendingText) as Pending;
    if (did !== pending.did) {
      await this.d.client.revoke(did).catch(() => {});
      throw new AtprotoSignInError(`ATProto sign-in failed: the PDS signed in ${did}, not ${pending.handle}`);
    }
    // The handle again, from the DID this time (both ways): a handle that moved is not taken.
    const identity = await this.d.client.identityResolver.resolve(did).catch(() => null);
    if (!identity || identity.handle !== pending.handle)
      throw new AtprotoSignInError(`ATProto sign-in failed: ${pending.handle} no longer names ${did}`);
    const pdsUrl = new URL((await result.session.getTokenInfo(false)).aud).origin;
    const account = await this.accountFor(did, pending.handle, pdsUrl);
    return this.d.auth.sessionFor(account);
  }

  private async accountFor(did: string, handle: string, pdsUrl: string): Promise<AccountRow> {
    const now = this.d.clock.now();
    const existing = await this.d.storage.accounts.byDid(did);
    if (existing) {
      await this.d.storage.atproto.link({ did, handle, pdsUrl, linkedAt: now });
      return existing;
    }
    const taken = await this.d.storage.accounts.byHandle(handle);
    if (taken) throw new AtprotoSignInError(`The handle ${handle} is already used by another wsync account`);
    const account: AccountRow = {
      did,
      handle,
      // No e-mail is asked of the PDS; the column is unique and required, so a reserved address.
      email: `${did.replaceAll(":", ".")}@atproto.invalid`,
      // Never used: an ATProto account signs in through its PDS only.
      passwordHash: await hashPassword(randomBase64Url(32)),
      publicKey: null,
      fingerprint: null,
      createdAt: now,
    };
    try {
      await this.d.storage.accounts.create(account);
    } catch (e) {
      if (e instanceof DuplicateError) {
        const again = await this.d.storage.accounts.byDid(did);
        if (again) return again;
        throw new AtprotoSignInError(`The handle ${handle} is already used by another wsync account`);
      }
      throw e;
    }
    await this.d.storage.atproto.link({ did, handle, pdsUrl, linkedAt: now });
    return account;
  }
}
