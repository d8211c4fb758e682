import type { ChainStore, VerifiedEpoch } from "../channel/chain.ts";

/**
 * Protocol §8 "Fresh devices": what a device verified on its own, carried to the user's other devices
 * (device linking, the key backup) so a new device does not start from the server's word alone.
 */
export interface TrustState {
  v: 1;
  /** Bumped whenever a head moves; a restored copy says how new it is. */
  version: number;
  /** When this copy was made (ms). */
  createdAt: number;
  /** did → pinned public key, and did → pinned (signed) handle. */
  pins: Record<string, string>;
  handles: Record<string, string>;
  channels: Record<string, ChannelTrust>;
}

/** One channel's trust: its newest verified epoch (the commit's facts), its owner, and what was seen. */
export interface ChannelTrust {
  head: { epochNumber: number; epochId: string };
  /** The verified entry of the head epoch: its signed member list, link and chains. */
  epoch: VerifiedEpoch;
  firstV2: number | null;
  firstV3: number | null;
  linkSecret: string | null;
  owner: string | null;
  /** The newest seen (sender, clientMsgId) pairs, and each sender chain's highest number. */
  pairs: Record<string, number>;
  chains: Record<string, Record<string, string>>;
}

/** Where a device's trust state came from (protocol §8), and since when. */
export interface TrustOrigin {
  source: "self" | "server" | "link" | "backup";
  /** ms: when the device signed in (server), or the date of the trust state it was given. */
  since: number;
}

export const VERSION_KEY = "wsync-trust-version";

/** What the trust state is made from and put back into: the keyring's chains and pins (keyring.ts). */
export interface TrustSources {
  readonly chains: ChainStore;
  allPins(): Promise<Record<string, string>>;
  allHandles(): Promise<Record<string, string>>;
  importPins(pins: Record<string, string>, handles: Record<string, string>): Promise<void>;
}
