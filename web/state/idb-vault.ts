import { createStore, del, get, set, type UseStore } from "idb-keyval";
import type { EpochKey, SecretVault } from "../../core/client/index.ts";
import { fromBase64 } from "../../core/crypto/base64.ts";
import { checkEpochKeyBytes } from "../../core/crypto/epoch.ts";
import { type Identity, importIdentity } from "../../core/crypto/identity.ts";
import { publicJwkFromRaw } from "../../core/crypto/public-key.ts";

/**
 * The browser's secret keys in IndexedDB as non-extractable CryptoKeys (docs/decisions/key-custody.md).
 * IndexedDB stores a CryptoKey by structured clone and gives back the same non-extractable key, so a
 * script on the page can use the keys while the page is open but never read them as bytes, and they
 * are in no storage that `localStorage`/`sessionStorage`/cookies expose.
 *
 * Two exceptions keep the private key readable by this app:
 * - `unconfirmed`: a new account's private key (base64) until the user confirmed saving it, so a reload
 *   can show the keys modal again; deleted on confirmation or logout;
 * - `held`: a key not yet secured elsewhere (no key backup, not handed to another device), sealed
 *   under a non-extractable AES-GCM key of this vault, so that the backup or a device link can still
 *   be made after the page that made the key is gone; deleted once the key is secured, or on logout
 *   (docs/decisions/key-securing.md).
 */

interface StoredIdentity {
  publicKey: string;
  ecdhKey: CryptoKey;
  signingKey: CryptoKey;
}

interface StoredEpoch {
  epochId: string;
  epochNumber: number;
  key: CryptoKey;
  createdAt: number;
}

const IDENTITY = "identity";
const UNCONFIRMED = "unconfirmed";
const HELD = "held";
const epochsKey = (channelId: string) => `epochs:${channelId}`;

function identityOf(stored: StoredIdentity): Identity {
  const publicKeyRaw = fromBase64(stored.publicKey);
  return {
    publicKey: stored.publicKey,
    publicKeyRaw,
    publicKeyJwk: publicJwkFromRaw(publicKeyRaw),
    ecdhKey: stored.ecdhKey,
    signingKey: stored.signingKey,
  };
}

function isStoredIdentity(v: unknown): v is StoredIdentity {
  const s = v as StoredIdentity | undefined;
  return (
    typeof s?.publicKey === "string" && s.ecdhKey instanceof CryptoKey && s.signingKey instanceof CryptoKey
  );
}

export class IdbVault implements SecretVault {
  private readonly db: UseStore;

  constructor(dbName = "wsync-vault") {
    this.db = createStore(dbName, "keys");
  }

  async loadIdentity(): Promise<Identity | null> {
    const stored = await get<unknown>(IDENTITY, this.db);
    return isStoredIdentity(stored) ? identityOf(stored) : null;
  }

  async saveIdentity(privateKey: string): Promise<Identity> {
    // importIdentity checks the pair and imports both keys non-extractable.
    const identity = await importIdentity(privateKey);
    const stored: StoredIdentity = {
      publicKey: identity.publicKey,
      ecdhKey: identity.ecdhKey,
      signingKey: identity.signingKey,
    };
    await set(IDENTITY, stored, this.db);
    return identity;
  }

  /** The non-extractable identity cannot be exported; only a copy held until secured can be. */
  async exportPrivateKey(): Promise<string | null> {
    const held = await get<unknown>(HELD, this.db);
    const stored = await get<unknown>(IDENTITY, this.db);
    if (!held || !isStoredIdentity(stored)) return null;
    return (await import("./held-key.ts")).openHeld(held, stored.publicKey);
  }

  async holdUntilSecured(privateKey: string | null): Promise<void> {
    if (privateKey === null) await del(HELD, this.db);
    else await set(HELD, await (await import("./held-key.ts")).sealHeld(privateKey), this.db);
  }

  async deleteIdentity(): Promise<void> {
    await del(IDENTITY, this.db);
    await del(UNCONFIRMED, this.db);
    await del(HELD, this.db);
  }

  snapshotIdentity(): Promise<unknown> {
    return get<unknown>(IDENTITY, this.db);
  }

  async restoreIdentity(snapshot: unknown): Promise<void> {
    if (isStoredIdentity(snapshot)) await set(IDENTITY, snapshot, this.db);
    else await del(IDENTITY, this.db);
  }

  async setUnconfirmed(privateKey: string | null): Promise<void> {
    if (privateKey === null) await del(UNCONFIRMED, this.db);
    else await set(UNCONFIRMED, privateKey, this.db);
  }

  async getUnconfirmed(): Promise<string | null> {
    const v = await get<unknown>(UNCONFIRMED, this.db);
    return typeof v === "string" ? v : null;
  }

  async loadEpochKeys(channelId: string): Promise<EpochKey[]> {
    const stored = (await get<StoredEpoch[]>(epochsKey(channelId), this.db)) ?? [];
    return stored
      .filter((s) => s && typeof s.epochId === "string" && s.key instanceof CryptoKey)
      .map((s) => ({ epochId: s.epochId, epochNumber: s.epochNumber, imported: Promise.resolve(s.key) }));
  }

  async saveEpochKeys(channelId: string, keys: EpochKey[]): Promise<void> {
    const stored: StoredEpoch[] = [];
    for (const k of keys) {
      let key: CryptoKey;
      if (k.key) {
        // New bytes are imported non-extractable once; the engine uses this same key from now on.
        key = await crypto.subtle.importKey("raw", checkEpochKeyBytes(k.key), "AES-GCM", false, [
          "encrypt",
          "decrypt",
        ]);
        k.imported = Promise.resolve(key);
      } else if (k.imported) {
        key = await k.imported;
      } else continue;
      stored.push({ epochId: k.epochId, epochNumber: k.epochNumber, key, createdAt: Date.now() });
    }
    await set(epochsKey(channelId), stored, this.db);
  }

  async deleteEpochKeys(channelId: string): Promise<void> {
    await del(epochsKey(channelId), this.db);
  }
}
