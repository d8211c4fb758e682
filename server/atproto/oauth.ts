import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  JoseKey,
  NodeOAuthClient,
  type NodeSavedSession,
  type NodeSavedState,
  type OAuthClientMetadataInput,
  type RuntimeLock,
} from "@atproto/oauth-client-node";
import type { AtprotoStore } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { type AtprotoConfig, isLoopbackUrl } from "./config.ts";
import { publicHandleResolver } from "./handle-resolver.ts";

/** Paths wsync serves for the OAuth client (docs/atproto.md). */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";
export const JWKS_PATH = "/oauth/jwks.json";
export const CALLBACK_PATH = "/oauth/callback";
/**
 * The scopes asked for: `atproto` (sign-in: the PDS tells us the DID) and the granular
 * `repo:chat.wsync.chatKey` (create, update and delete records of that one collection: the chat-key
 * proof, docs/atproto.md). Nothing else of the repository is read or written.
 */
export const SCOPE = "atproto repo:chat.wsync.chatKey";

/** How long an authorization request may wait for its callback (the library's state entries). */
const STATE_TTL_MS = 10 * 60 * 1000;

/**
 * The server's private signing key for `private_key_jwt` client authentication, made once and kept in
 * the data folder with mode 0600 (atproto-oauth-key.jwk).
 */
export async function loadClientKey(dataDir: string): Promise<JoseKey> {
  const path = join(dataDir, "atproto-oauth-key.jwk");
  if (existsSync(path)) return JoseKey.fromImportable(readFileSync(path, "utf8"), "wsync-1");
  const key = await JoseKey.generate(["ES256"], "wsync-1");
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, JSON.stringify(key.privateJwk), { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}

/**
 * The client's metadata document. A public URL on https makes wsync a confidential client
 * (private_key_jwt, its JWKS at JWKS_PATH). A loopback public URL (development, tests) follows
 * ATProto's loopback client rules: client_id http://localhost?…, no client authentication (the PDS
 * refuses http client metadata URLs), still with PAR, PKCE and DPoP.
 */
export function clientMetadata(publicUrl: string): OAuthClientMetadataInput {
  const redirect = `${publicUrl}${CALLBACK_PATH}`;
  if (isLoopbackUrl(publicUrl)) {
    const u = new URL(redirect);
    if (u.hostname === "localhost") u.hostname = "127.0.0.1"; // loopback redirects name the IP
    const params = new URLSearchParams({ redirect_uri: u.href, scope: SCOPE });
    return {
      client_id: `http://localhost?${params}`,
      client_name: "wsync",
      redirect_uris: [u.href as `http://127.0.0.1:${string}`],
      scope: SCOPE,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      application_type: "web",
      token_endpoint_auth_method: "none",
      dpop_bound_access_tokens: true,
    };
  }
  return {
    client_id: `${publicUrl}${CLIENT_METADATA_PATH}`,
    client_name: "wsync",
    client_uri: publicUrl,
    redirect_uris: [redirect as `https://${string}`],
    scope: SCOPE,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    application_type: "web",
    token_endpoint_auth_method: "private_key_jwt",
    token_endpoint_auth_signing_alg: "ES256",
    jwks_uri: `${publicUrl}${JWKS_PATH}`,
    dpop_bound_access_tokens: true,
  };
}

/** The library's state and session stores, as rows of the database every process shares. */
function stores(db: AtprotoStore, clock: Clock) {
  const stateStore = {
    async get(key: string): Promise<NodeSavedState | undefined> {
      // A state is used once: reading it for the callback removes it, so a replayed callback fails.
      const text = await db.take("state", key, clock.now());
      return text ? (JSON.parse(text) as NodeSavedState) : undefined;
    },
    async set(key: string, value: NodeSavedState): Promise<void> {
      await db.set("state", key, JSON.stringify(value), clock.now() + STATE_TTL_MS);
    },
    async del(key: string): Promise<void> {
      await db.delete("state", key);
    },
  };
  const sessionStore = {
    async get(key: string): Promise<NodeSavedSession | undefined> {
      const text = await db.get("session", key, clock.now());
      return text ? (JSON.parse(text) as NodeSavedSession) : undefined;
    },
    async set(key: string, value: NodeSavedSession): Promise<void> {
      await db.set("session", key, JSON.stringify(value), null);
    },
    async del(key: string): Promise<void> {
      await db.delete("session", key);
    },
  };
  return { stateStore, sessionStore };
}

export interface OAuthClientDeps {
  config: AtprotoConfig;
  publicUrl: string;
  dataDir: string;
  store: AtprotoStore;
  clock: Clock;
  /** The lock every process takes around a token refresh (Redis when configured); default: this process's. */
  lock?: RuntimeLock;
}

export async function createOAuthClient(d: OAuthClientDeps): Promise<NodeOAuthClient> {
  const loopback = isLoopbackUrl(d.publicUrl);
  const { stateStore, sessionStore } = stores(d.store, d.clock);
  const keyset = loopback ? undefined : [await loadClientKey(d.dataDir)];
  return new NodeOAuthClient({
    clientMetadata: clientMetadata(d.publicUrl),
    keyset,
    stateStore,
    sessionStore,
    // http PDSes and authorization servers only while wsync itself is on loopback (development).
    allowHttp: loopback,
    plcDirectoryUrl: d.config.plcUrl,
    // An XRPC resolver when configured; otherwise DNS and /.well-known, guarded for Bun (handle-resolver.ts).
    handleResolver: d.config.handleResolver ?? publicHandleResolver(),
    ...(d.lock ? { requestLock: d.lock } : {}),
  });
}
