import type { EpochChange, IntegrityNote, SecurityCheck } from "./state.ts";

/**
 * The words of protocol v2's warnings and notes, once, so the web board and the CLI say the same
 * thing. Each warning names the check, the channel's epoch, and what it means for the person.
 */
export const SecurityText = {
  warning(
    check: SecurityCheck,
    o: { epochNumber?: number | null; handle?: string | null; detail?: string },
  ): string {
    const epoch = o.epochNumber ? ` (epoch ${o.epochNumber})` : "";
    const who = o.handle ?? "a member";
    switch (check) {
      case "signature":
        return `The server offered an epoch${epoch} whose commit signature does not verify: its key is not used, and messages in this channel are not being sent under it.`;
      case "creator":
        return `The server offered an epoch${epoch} made by someone who is not a member: its key is not used, and messages in this channel are not being sent under it.`;
      case "key-commitment":
        return `The server offered a key that does not match the signed commit${epoch}: messages in this channel are not being sent.`;
      case "chain":
        return `The server offered an epoch${epoch} that does not follow the one this device holds: its key is not used, and messages in this channel are not being sent under it.`;
      case "members":
        return `The server offered an epoch${epoch} that does not list this device's key: its key is not used.`;
      case "admission":
        return `${who} was added${epoch} without an invite or link this device could check: no key is shared with them, and messages in this channel are not being sent.`;
      case "rollback":
        return `The server reports an older epoch${epoch} than the newest one this device verified (a rollback): messages in this channel are not being sent.`;
      case "fork":
        return `The server offered two different signed epochs with one number${epoch}: messages in this channel are not being sent under either until it is resolved.`;
      case "legacy-after-v2":
        return `The server offered a version 1 epoch${epoch} after this channel moved to version 2: its key is not used.`;
      case "handle":
        return `${who}'s name does not match the one pinned for them${o.detail ? ` (${o.detail})` : ""}: their messages are not shown as verified.`;
      case "key-changed":
        if (o.detail === "pending")
          return `${who} reset their key: they will read new messages once they are back. Compare safety numbers when they are.`;
        return `${who}'s key changed: compare safety numbers. Until you verify them again, their safety number shows as changed, not verified.`;
      case "member-key":
        return o.detail === "anchor"
          ? `The server shows a different key for ${who} than the channel's signed member list: no key is shared with the server's one, and messages in this channel are not being sent until it shows the listed key.`
          : `The server offered an epoch${epoch} that changes ${who}'s key or name without ${who} making that change: its key is not used, and messages in this channel are not being sent under it.`;
      case "withheld":
        return o.detail === "fork"
          ? `Two different messages from ${who} carry the same number in their sender chain: neither is shown as verified.`
          : `The server is withholding messages from ${who} (their sender chain skips numbers): the gap is shown where it is.`;
      case "deletion":
        return `A signed deletion by ${who} is shown on a message it does not name, or by someone who may not delete it: that message is not shown as deleted by them.`;
      case "fresh-device":
        return `This device has no trust state from your other devices: this channel is verified from the server's word${o.detail ? ` since ${o.detail}` : ""} until another member's signed message or commit arrives. Link this device from another one to carry its trust over.`;
    }
  },
  note: {
    legacy: "legacy key binding",
    replay: "replay of an earlier message",
    "out-of-order": "out of order (possible replay)",
    "not-a-member": "sender is not in this epoch's signed member list",
    "outside-epoch": "signed time is outside its epoch",
    "handle-mismatch": "the server's name for the sender differs from the pinned one",
    fork: "another message carries the same number in this sender's chain",
  } satisfies Record<IntegrityNote, string>,
  missing: "missing (withheld by the server)",
  /** Records before the oldest one kept, under the channel's retention (not a warning). */
  retained: (days: number) => `removed after ${days} day${days === 1 ? "" : "s"} (retention)`,
  /** Protocol §8: "{k} message(s) from {handle} missing (withheld by the server)". */
  withheld: (count: number, handle: string) =>
    `${count} message${count === 1 ? "" : "s"} from ${handle} missing (withheld by the server)`,
  /** Protocol §8: a did no verified commit has named yet. */
  unverifiedName: (did: string) => `${did} (unverified name)`,
  deletedBy: (handle: string) => `deleted by ${handle}`,
  /**
   * Issue 33: what a chat-key proof in the person's ATProto repository says about the key shown beside
   * the safety number (null: not an ATProto account, nothing to say).
   */
  keyProof(
    proof:
      | { status: "confirmed"; handle: string | null }
      | { status: "missing" }
      | { status: "mismatch"; reason: string }
      | { status: "unavailable"; reason: string }
      | null,
    handle: string,
  ): string | null {
    if (!proof) return null;
    const h = `@${(proof.status === "confirmed" && proof.handle) || handle}`.replace(/^@@/, "@");
    switch (proof.status) {
      case "confirmed":
        return `key confirmed by ${h}'s ATProto repository`;
      case "missing":
        return "no proof published";
      case "mismatch":
        return `this key does not match ${h}'s ATProto repository (${proof.reason}): it is not trusted. Compare safety numbers.`;
      case "unavailable":
        return `${h}'s ATProto repository could not be checked just now`;
    }
  },
  deletedUnsigned: "removed by the server (no valid signature)",
  linkUnknown:
    "This device does not know this secret channel's link, so it cannot make the channel's next key: a member who knows the link will.",
  sendBlocked: "Messages in this channel are not being sent: a security check failed (see the warning).",
  /** A channel with no epoch yet: only its owner's client may make epoch 1 (protocol §5). */
  awaitingOwnerKeys: "This channel has no keys yet: waiting for the owner's client to set up keys.",
  /** A direct conversation whose first key its opener's client has not made yet. */
  directNotStarted: (opener: string) =>
    `${opener}'s client has not started this conversation's encryption yet: you can write once it has.`,
  /** "alice's client added bob, removed carol" from a signed commit. */
  epochChange(e: EpochChange): string {
    const parts: string[] = [];
    const admitted = (a: EpochChange["added"][number]) =>
      a.admission === "link-unchecked"
        ? `${a.handle} (by link; this device cannot check the link)`
        : a.handle;
    if (e.added.length) parts.push(`added ${e.added.map(admitted).join(", ")}`);
    if (e.removed.length) parts.push(`removed ${e.removed.map((r) => r.handle).join(", ")}`);
    if (e.rekeyed.length && !e.keyChange)
      parts.push(`took the new key of ${e.rekeyed.map((r) => r.handle).join(", ")}`);
    if (e.linkChanged) parts.push("made a new secret link");
    if (e.keyChange) {
      // Protocol §8: a warning row unless the previous key signed the change.
      return e.keyChange.signed
        ? `${e.keyChange.handle} moved to a new key, signed by the previous one (epoch ${e.epochNumber})`
        : `${e.keyChange.handle}'s key changed: compare safety numbers (epoch ${e.epochNumber})`;
    }
    if (e.renamed) parts.push(`renamed: ${e.renamed.from} is now ${e.renamed.to}`);
    if (parts.length === 0) parts.push("rotated the key");
    return `${e.creator.handle}'s client ${parts.join(", ")} (epoch ${e.epochNumber})`;
  },
} as const;
