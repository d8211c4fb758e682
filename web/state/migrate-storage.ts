import type { SecretVault, StoredEpochKey } from "../../core/client/index.ts";
import { fromBase64 } from "../../core/crypto/base64.ts";
import { API_BASE, RouteMeta, SESSION_HEADER } from "../../core/protocol/runtime.ts";

const EPOCH_PREFIX = "wsync-epochs:";

/**
 * First load after the key-custody upgrade (docs/decisions/key-custody.md): what earlier versions kept
 * in localStorage moves to where a script cannot lift it, then is deleted.
 * - `privateKey` → the IndexedDB vault, as non-extractable keys;
 * - `wsync-epochs:{channelId}` → the vault, as non-extractable AES keys;
 * - a bearer session (`auth` with a refresh token, and `token`) → a cookie session: its refresh token
 *   is exchanged once for the HttpOnly cookie, and `auth` is rewritten without tokens.
 * Each step deletes its old copy only after the new one is stored; an interrupted run resumes on the
 * next load. Returns what it moved (for tests).
 */
export async function migrateLegacyStorage(input: {
  storage: Storage;
  vault: SecretVault;
  cookieSessions: boolean;
  baseUrl: string;
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
}): Promise<{ identity: boolean; epochChannels: number; session: "moved" | "ended" | "kept" | "none" }> {
  const { storage, vault } = input;
  const out = { identity: false, epochChannels: 0, session: "none" as "moved" | "ended" | "kept" | "none" };

  const privateKey = storage.getItem("privateKey");
  if (privateKey) {
    try {
      await vault.saveIdentity(privateKey);
      out.identity = true;
    } catch {
      // Not a usable key: nothing to keep (the validation modal asks for the real one).
    }
    storage.removeItem("privateKey");
  }

  for (const name of Object.keys(storage)) {
    if (!name.startsWith(EPOCH_PREFIX)) continue;
    const channelId = name.slice(EPOCH_PREFIX.length);
    try {
      const stored = JSON.parse(storage.getItem(name) ?? "[]") as StoredEpochKey[];
      const keys = stored.flatMap((s) => {
        try {
          return [{ epochId: s.epochId, epochNumber: s.epochNumber, key: fromBase64(s.symmetricKeyJwk.k) }];
        } catch {
          return [];
        }
      });
      const existing = await vault.loadEpochKeys(channelId);
      const known = new Set(existing.map((k) => k.epochId));
      await vault.saveEpochKeys(channelId, [...existing, ...keys.filter((k) => !known.has(k.epochId))]);
      out.epochChannels++;
    } catch {
      // A damaged store: its keys are fetched and unwrapped again on the next open.
    }
    storage.removeItem(name);
  }

  if (input.cookieSessions) {
    let auth: { did?: unknown; refreshJwt?: unknown; accessJwt?: unknown; session?: unknown } | null = null;
    try {
      auth = JSON.parse(storage.getItem("auth") ?? "null");
    } catch {
      auth = null;
    }
    if (auth && auth.session !== "cookie" && typeof auth.refreshJwt === "string" && auth.refreshJwt) {
      out.session = await exchangeForCookie(input, auth.refreshJwt);
    }
    if (out.session !== "kept") storage.removeItem("token");
  }
  return out;
}

/** Presents the old refresh token once, asking for the cookie; rewrites `auth` without tokens. */
async function exchangeForCookie(
  input: {
    storage: Storage;
    baseUrl: string;
    fetch: (input: string, init?: RequestInit) => Promise<Response>;
  },
  refreshJwt: string,
): Promise<"moved" | "ended" | "kept"> {
  let res: Response;
  try {
    res = await input.fetch(input.baseUrl.replace(/\/+$/, "") + API_BASE + RouteMeta.refresh.path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${refreshJwt}`,
        [SESSION_HEADER]: "cookie",
        accept: "application/json",
      },
    });
  } catch {
    return "kept"; // Offline: try again on the next load.
  }
  if (res.status === 401) {
    input.storage.removeItem("auth");
    return "ended";
  }
  if (!res.ok) return "kept";
  const s = (await res.json()) as { did: string; handle: string; email: string; publicKey: string | null };
  input.storage.setItem(
    "auth",
    JSON.stringify({
      did: s.did,
      handle: s.handle,
      email: s.email,
      publicKey: s.publicKey,
      session: "cookie",
    }),
  );
  return "moved";
}
