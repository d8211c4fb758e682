import type { NodeOAuthClient } from "@atproto/oauth-client-node";
import { ApiError, type Session } from "../../core/protocol/index.ts";
import type { AuthService } from "../services/auth-service.ts";
import { hashPassword } from "../services/passwords.ts";
import { type AccountRow, DuplicateError, type Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { randomBase64Url } from "../util/ids.ts";
import { type CliRequest, checkChallenge, checkLoopbackRedirect } from "./cli-login.ts";
import { isLoopbackUrl } from "./config.ts";
import { SCOPE } from "./oauth.ts";

/** The handle syntax of ATProto (a domain name of at least two labels). */
const HANDLE_RE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why a sign-in was refused, for the callback page; never a secret. */
export class AtprotoSignInError extends ApiError {
  constructor(
    message: string,
    /** The terminal that asked for this sign-in (wsync login --atproto), told of the refusal. */
    readonly cli?: CliRequest,
  ) {
    super("Unauthorized", message);
  }
}

/** A sign-in the PDS completed: the account, and the terminal that asked for it, if one did. */
export interface SignedIn {
  account: AccountRow;
  cli?: CliRequest;
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
  /** Present when `wsync login --atproto` asked (cli-login.ts): where the one-time code goes. */
  cli?: CliRequest;
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
  login(input: unknown): Promise<{ url: string }> {
    return this.begin(input);
  }

  /**
   * Step 1 for a terminal (`wsync login --atproto`): as `login`, remembering the CLI's loopback URL
   * and its challenge, so the callback hands the CLI a one-time code instead of a browser session.
   */
  loginForCli(input: unknown): Promise<{ url: string }> {
    const o = (input ?? {}) as { redirect?: unknown; challenge?: unknown };
    return this.begin(input, {
      redirect: checkLoopbackRedirect(o.redirect),
      challenge: checkChallenge(o.challenge),
    });
  }

  private async begin(input: unknown, cli?: CliRequest): Promise<{ url: string }> {
    const raw = (input as { handle?: unknown } | null)?.handle;
    if (typeof raw !== "string") throw new ApiError("InvalidRequest", "handle: expected a string");
    const handle = raw.trim().replace(/^@/, "").toLowerCase();
    if (handle.length > 253 || !HANDLE_RE.test(handle))
      throw new ApiError("InvalidRequest", "handle: expected an ATProto handle such as alice.bsky.social");
    // Handle → DID → DID document whose alsoKnownAs names the handle (the library refuses otherwise),
    // never from the library's cache: a handle that moved must stop signing in at once.
    let identity: Awaited<ReturnType<NodeOAuthClient["identityResolver"]["resolve"]>>;
    try {
      identity = await this.d.client.identityResolver.resolve(handle, { noCache: true });
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
    const pending: Pending = { handle, did: identity.did, ...(cli ? { cli } : {}) };
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
    return this.d.auth.sessionFor((await this.complete(params)).account);
  }

  /**
   * Step 2 without the session: the account the PDS signed in, and the terminal that asked for the
   * sign-in if one did (the route then gives it a one-time code, cli-login.ts). A refusal carries
   * that terminal too, so it can be told.
   */
  async complete(params: URLSearchParams): Promise<SignedIn> {
    let result: Awaited<ReturnType<NodeOAuthClient["callback"]>>;
    try {
      // The library takes its state once (stores in oauth.ts), checks the issuer, swaps the code with
      // PKCE and DPoP, and checks that the token's `sub` is served by that issuer.
      result = await this.d.client.callback(params);
    } catch (e) {
      // The library names the request it refused (its app state) when it knew it: a terminal that
      // asked is told. A replayed state names none (its entry is gone), so it is told nothing.
      const state = (e as { state?: unknown }).state;
      const left =
        typeof state === "string"
          ? await this.d.storage.atproto.take("pending", state, this.d.clock.now())
          : null;
      const cli = left ? (JSON.parse(left) as Pending).cli : undefined;
      throw new AtprotoSignInError(`ATProto sign-in failed: ${(e as Error).message}`, cli);
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
      throw new AtprotoSignInError(
        `ATProto sign-in failed: the PDS signed in ${did}, not ${pending.handle}`,
        pending.cli,
      );
    }
    // The handle again, from the DID this time (both ways): a handle that moved is not taken.
    const identity = await this.d.client.identityResolver.resolve(did, { noCache: true }).catch(() => null);
    if (!identity || identity.handle !== pending.handle)
      throw new AtprotoSignInError(
        `ATProto sign-in failed: ${pending.handle} no longer names ${did}`,
        pending.cli,
      );
    const pdsUrl = new URL((await result.session.getTokenInfo(false)).aud).origin;
    try {
      const account = await this.accountFor(did, pending.handle, pdsUrl);
      return { account, ...(pending.cli ? { cli: pending.cli } : {}) };
    } catch (e) {
      if (e instanceof AtprotoSignInError && pending.cli)
        throw new AtprotoSignInError(e.message, pending.cli);
      throw e;
    }
  }

  private async accountFor(did: string, handle: string, pdsUrl: string): Promise<AccountRow> {
    const now = this.d.clock.now();
    const existing = await this.d.storage.accounts.byDid(did);
    if (existing) {
      await this.d.storage.atproto.link({ did, handle: existing.handle, pdsUrl, linkedAt: now });
      if (existing.handle === handle) return existing;
      // The handle moved on the ATProto side (this one was just verified both ways): the account takes
      // it, and the old one is free for whoever holds it now. Other members' clients pinned the old
      // name from signed commits, so they show protocol §7's name warning until this member's own
      // signed commit names the new one (docs/atproto.md "When a handle moves").
      try {
        await this.d.storage.atproto.rename(did, handle);
      } catch (e) {
        if (e instanceof DuplicateError)
          throw new AtprotoSignInError(`The handle ${handle} is already used by another wsync account`);
        throw e;
      }
      return { ...existing, handle };
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
