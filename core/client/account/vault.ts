import { fromBase64, toBase64Url } from "../../crypto/base64.ts";
import type { Bytes } from "../../crypto/bytes.ts";
import { type Identity, importIdentity } from "../../crypto/identity.ts";
import { type KeyValueStore, readJson, StoreKeys } from "../store.ts";

/** Spec §3 "Stored epoch key (local)": one entry per epoch in a per-channel store. */
export interface StoredEpochKey {
  epochId: string;
  epochNumber: number;
  symmetricKeyJwk: { kty: "oct"; k: string; alg: "A256GCM" };
  createdAt: number;
}

export interface EpochKey {
  epochId: string;
  epochNumber: number;
  /**
   * The key's bytes: present when this client unwrapped or made the key, or loaded it from a store
   * that keeps bytes (the CLI's file). Absent for a key loaded from the browser's vault, which holds
   * only a non-extractable CryptoKey (`imported`).
   */
  key?: Bytes;
  /** The key imported into WebCrypto (once, on first use; or as the vault stored it). */
  imported?: Promise<CryptoKey>;
}

/**
 * Where this device keeps its secret keys: the identity key pair and the epoch keys it unwrapped.
 * The browser's vault (web/state/idb-vault.ts) keeps them in IndexedDB as non-extractable CryptoKeys,
 * so no script on the page can read them back as bytes; the CLI and tests keep them in their
 * KeyValueStore (a 0600 file, a Map) through StoreVault below. docs/decisions/key-custody.md.
 */
export interface SecretVault {
  loadIdentity(): Promise<Identity | null>;
  /** Imports and stores the key; returns it ready for use. */
  saveIdentity(privateKey: string): Promise<Identity>;
  /** The private key as base64 PKCS8, or null when there is none or it cannot leave the vault. */
  exportPrivateKey(): Promise<string | null>;
  deleteIdentity(): Promise<void>;
  /** What saveIdentity stored, to put back when a key change is refused (opaque). */
  snapshotIdentity(): Promise<unknown>;
  restoreIdentity(snapshot: unknown): Promise<void>;
  /**
   * A new account's private key until the user confirmed they saved it: a reload shows the keys
   * again instead of publishing a key nobody wrote down. Null clears it.
   */
  setUnconfirmed(privateKey: string | null): Promise<void>;
  getUnconfirmed(): Promise<string | null>;
  /**
   * Keeps the private key readable by this app until it is secured elsewhere (a key backup on the
   * server, or handed to another device), so that it can still be sealed or linked after this page
   * is gone; null drops the copy. A vault that can always export its key (StoreVault) needs no copy.
   * docs/decisions/key-securing.md.
   */
  holdUntilSecured(privateKey: string | null): Promise<void>;
  loadEpochKeys(channelId: string): Promise<EpochKey[]>;
  /** Stores the channel's whole set (keys carry their bytes when new, or an imported key). */
  saveEpochKeys(channelId: string, keys: EpochKey[]): Promise<void>;
  deleteEpochKeys(channelId: string): Promise<void>;
}

const UNCONFIRMED = "wsync-unconfirmed-key";

/** Keys in a KeyValueStore, as spec §3 names them (privateKey, publicKey, per-channel epoch stores). */
export class StoreVault implements SecretVault {
  constructor(private readonly store: KeyValueStore) {}

  async loadIdentity(): Promise<Identity | null> {
    const privateKey = await this.store.get(StoreKeys.privateKey);
    return privateKey ? importIdentity(privateKey) : null;
  }

  async saveIdentity(privateKey: string): Promise<Identity> {
    const identity = await importIdentity(privateKey);
    await this.store.set(StoreKeys.privateKey, privateKey);
    await this.store.set(StoreKeys.publicKey, identity.publicKey);
    return identity;
  }

  exportPrivateKey(): Promise<string | null> {
    return this.store.get(StoreKeys.privateKey);
  }

  async deleteIdentity(): Promise<void> {
    await this.store.delete(StoreKeys.privateKey);
    await this.store.delete(StoreKeys.publicKey);
    await this.store.delete(UNCONFIRMED);
  }

  async snapshotIdentity(): Promise<unknown> {
    return this.store.get(StoreKeys.privateKey);
  }

  async restoreIdentity(snapshot: unknown): Promise<void> {
    if (typeof snapshot === "string") await this.saveIdentity(snapshot);
    else await this.deleteIdentity();
  }

  async setUnconfirmed(privateKey: string | null): Promise<void> {
    // The key itself is already stored as privateKey: only the flag is kept.
    if (privateKey === null) await this.store.delete(UNCONFIRMED);
    else await this.store.set(UNCONFIRMED, "1");
  }

  async getUnconfirmed(): Promise<string | null> {
    return (await this.store.get(UNCONFIRMED)) ? this.store.get(StoreKeys.privateKey) : null;
  }

  async holdUntilSecured(): Promise<void> {
    // The key file already holds the key in readable form (mode 0600): nothing more to keep.
  }

  async loadEpochKeys(channelId: string): Promise<EpochKey[]> {
    const stored = (await readJson<StoredEpochKey[]>(this.store, StoreKeys.epochs(channelId))) ?? [];
    const out: EpochKey[] = [];
    for (const s of stored) {
      try {
        out.push({ epochId: s.epochId, epochNumber: s.epochNumber, key: fromBase64(s.symmetricKeyJwk.k) });
      } catch {
        // A damaged entry is skipped; the key is fetched and unwrapped again.
      }
    }
    return out;
  }

  async saveEpochKeys(channelId: string, keys: EpochKey[]): Promise<void> {
    const stored: StoredEpochKey[] = [];
    for (const k of keys) {
      if (!k.key) continue;
      stored.push({
        epochId: k.epochId,
        epochNumber: k.epochNumber,
        symmetricKeyJwk: { kty: "oct", k: toBase64Url(k.key), alg: "A256GCM" },
        createdAt: Date.now(),
      });
    }
    await this.store.set(StoreKeys.epochs(channelId), JSON.stringify(stored));
  }

  async deleteEpochKeys(channelId: string): Promise<void> {
    await this.store.delete(StoreKeys.epochs(channelId));
  }
}
