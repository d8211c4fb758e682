import { fingerprint } from "../../crypto/index.ts";
import type { EngineContext } from "../channel/engine-context.ts";

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
  private readonly byFp = new Map<string, Promise<string | null>>();

  constructor(private readonly c: EngineContext) {}

  /** The pinned key of a did; fetched and pinned (key and handle) on first sight. */
  authorKey(did: string): Promise<string | null> {
    return once(this.pins, did, async () => {
      const pinned = await this.c.keyring.pinned(did);
      if (pinned) return pinned;
      const { keys } = await this.c.api.call("getKeys", { dids: [did] });
      const k = keys.find((x) => x.did === did);
      if (!k?.publicKey) return null;
      // The key only: a name is pinned from the first verified commit that lists it (protocol §8).
      await this.c.keyring.pin(did, k.publicKey, (k as { atproto?: boolean }).atproto === true);
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
    if (!fp || (pinned && (await this.fingerprintOf(pinned)) === fp)) return pinned;
    // Only the key the signed member list names may have signed it (protocol §8): a pin that differs
    // (a key the user accepted, or the server's word) never stands in for it.
    return this.keyWithFp(did, fp).catch(() => null);
  }

  /**
   * Protocol §8: the key of `did` whose fingerprint, computed here, is `fp`: the pinned one, or the
   * one the server offers now, or one it lists as replaced. A signed member list names the fingerprint,
   * so where the key comes from does not matter; it is never pinned by this lookup.
   */
  keyWithFp(did: string, fp: string): Promise<string | null> {
    return once(this.byFp, `${did} ${fp}`, async () => {
      const pinned = await this.c.keyring.pinned(did);
      if (pinned && (await this.fingerprintOf(pinned)) === fp) return pinned;
      const { keys } = await this.c.api.call("getKeys", { dids: [did] });
      const k = keys.find((x) => x.did === did);
      for (const candidate of [k?.publicKey, ...(k?.previousKeys ?? []).map((p) => p.publicKey)]) {
        if (candidate && (await this.fingerprintOf(candidate).catch(() => null)) === fp) return candidate;
      }
      return null;
    }).then((key) => {
      // A miss is not remembered: the key may be published a moment later.
      if (key === null) this.byFp.delete(`${did} ${fp}`);
      return key;
    });
  }

  /** Forgets the pin lookup of a did (its key changed), so the next one reads the keyring again. */
  forget(did: string): void {
    this.pins.delete(did);
    for (const k of [...this.byFp.keys()]) if (k.startsWith(`${did} `)) this.byFp.delete(k);
  }

  /** A key's fingerprint, hashed once per key (every message a sender signs asks for it). */
  fingerprintOf(publicKey: string): Promise<string> {
    return once(this.fingerprints, publicKey, () => fingerprint(publicKey));
  }
}
