import type { KeyProofResult, ProofSource } from "../../atproto/verify.ts";
import { type KeyValueStore, readJson } from "../store.ts";

export type { KeyProofResult };

const RESULTS_KEY = "wsync-atproto-proofs";
const DIDS_KEY = "wsync-atproto-dids";

/**
 * Chat-key proofs of ATProto accounts (issue 33, docs/protocol-extensions.md "ATProto key proofs"):
 * before a key of an ATProto DID is pinned, the client checks the DID's own repository for a
 * `chat.wsync.chatKey` record naming it, every byte verified here (core/atproto/verify.ts, loaded on
 * first use so pages without ATProto members never download it). Each (did, key) is checked at most
 * once: a verdict (confirmed, missing, mismatch) is kept in the store; "unavailable" is not, and is
 * tried again the next time the key is looked at.
 */
export class KeyProofs {
  private results: Record<string, KeyProofResult> | null = null;
  private dids: string[] | null = null;
  private readonly inFlight = new Map<string, Promise<KeyProofResult>>();
  /** Proofs actually verified (not answered from the cache): what a benchmark counts. */
  checked = 0;

  constructor(
    private readonly store: KeyValueStore,
    /** The relay source (core/atproto/relay-source.ts) and this server's host (the record key). */
    private readonly source: () => { source: ProofSource; server: string } | null,
  ) {}

  private async load(): Promise<Record<string, KeyProofResult>> {
    this.results ??= (await readJson<Record<string, KeyProofResult>>(this.store, RESULTS_KEY)) ?? {};
    this.dids ??= (await readJson<string[]>(this.store, DIDS_KEY)) ?? [];
    return this.results;
  }

  /** Remembers that a did is an ATProto account (the account shape's `atproto: true`). */
  async markAtproto(did: string): Promise<void> {
    await this.load();
    if (this.dids?.includes(did)) return;
    this.dids = [...(this.dids ?? []), did];
    await this.store.set(DIDS_KEY, JSON.stringify(this.dids));
  }

  async isAtproto(did: string): Promise<boolean> {
    await this.load();
    return this.dids?.includes(did) ?? false;
  }

  /** The verdict already reached for this key, if any (display paths). */
  async known(did: string, publicKey: string): Promise<KeyProofResult | null> {
    return (await this.load())[`${did} ${publicKey}`] ?? null;
  }

  /** Checks the proof of `publicKey` for `did` once; later calls get the same verdict. */
  check(did: string, publicKey: string): Promise<KeyProofResult> {
    const id = `${did} ${publicKey}`;
    let p = this.inFlight.get(id);
    if (p) return p;
    p = (async () => {
      const results = await this.load();
      const kept = results[id];
      if (kept) return kept;
      const src = this.source();
      if (!src) return { status: "unavailable", reason: "not signed in" } as const;
      const { checkKeyProof } = await import("../../atproto/verify.ts");
      this.checked++;
      const result = await checkKeyProof({ did, publicKey, server: src.server }, src.source).catch(
        (e: unknown): KeyProofResult => ({
          status: "unavailable",
          reason: String((e as Error)?.message ?? e),
        }),
      );
      if (result.status !== "unavailable") {
        results[id] = result;
        await this.store.set(RESULTS_KEY, JSON.stringify(results));
      }
      return result;
    })().finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, p);
    return p;
  }

  async clear(): Promise<void> {
    this.results = null;
    this.dids = null;
    await this.store.delete(RESULTS_KEY);
    await this.store.delete(DIDS_KEY);
  }
}
