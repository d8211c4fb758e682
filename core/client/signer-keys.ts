import { fingerprint } from "../crypto/index.ts";
import type { EngineContext } from "./engine-context.ts";

/** One lookup per key at a time, remembered once it succeeds (a failure is tried again next time). */
function once<T>(memo: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = memo.get(key);
  if (!p) {
    p = make();
    memo.set(key, p);
    p.catch(() => memo.delete(key));
  }
  return p;
}

/**
 * Whose key checks what someone signed: the key pinned for a did on first sight, and, for what they
 * signed before replacing it, the earlier key a signed member list names by fingerprint.
 */
export class SignerKeys {
  private readonly pins = new Map<string, Promise<string | null>>();
  private readonly earlier = new Map<string, Promise<string | null>>();
  private readonly fingerprints = new Map<string, Promise<string>>();

  constructor(private readonly c: EngineContext) {}

  /** The pinned key of a did; fetched and pinned (key and handle) on first sight. */
  authorKey(did: string): Promise<string | null> {
    return once(this.pins, did, async () => {
      const pinned = await this.c.keyring.pinned(did);
      if (pinned) return pinned;
      const { keys } = await this.c.api.call("getKeys", { dids: [did] });
      const k = keys.find((x) => x.did === did);
      if (!k?.publicKey) return null;
      await this.c.keyring.pin(did, k.publicKey);
      await this.c.keyring.pinHandles([{ did, handle: k.handle }]);
      return (await this.c.keyring.pinned(did)) ?? null;
    });
  }

  /**
   * A key `did` had before its current one whose fingerprint (computed here, never taken from the
   * server) is `fp`, from get-keys' list of replaced keys; null when there is none.
   */
  previousKey(did: string, fp: string): Promise<string | null> {
    return once(this.earlier, `${did} ${fp}`, async () => {
      const { keys } = await this.c.api.call("getKeys", { dids: [did] });
      for (const k of keys.find((x) => x.did === did)?.previousKeys ?? []) {
        if ((await this.fingerprintOf(k.publicKey).catch(() => null)) === fp) return k.publicKey;
      }
      return null;
    });
  }

  /**
   * The key to check what `did` signed in a context whose signed member list names them under `fp`
   * (an epoch's commit): the pinned key when it has that fingerprint, else the earlier key that has.
   */
  async signerKey(did: string, fp: string | null): Promise<string | null> {
    const pinned = await this.authorKey(did);
    if (!fp || !pinned || (await this.fingerprintOf(pinned)) === fp) return pinned;
    return (await this.previousKey(did, fp).catch(() => null)) ?? pinned;
  }

  /** Forgets the pin lookup of a did (its key changed), so the next one reads the keyring again. */
  forget(did: string): void {
    this.pins.delete(did);
  }

  /** A key's fingerprint, hashed once per key (every message a sender signs asks for it). */
  private fingerprintOf(publicKey: string): Promise<string> {
    return once(this.fingerprints, publicKey, () => fingerprint(publicKey));
  }
}
