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
        return `${who}'s encryption key changed. Compare safety numbers before trusting their messages.`;
    }
  },
  note: {
    legacy: "legacy key binding",
    replay: "replay of an earlier message",
    "out-of-order": "out of order (possible replay)",
    "not-a-member": "sender is not in this epoch's signed member list",
    "outside-epoch": "signed time is outside its epoch",
    "handle-mismatch": "the server's name for the sender differs from the pinned one",
  } satisfies Record<IntegrityNote, string>,
  missing: "missing (withheld by the server)",
  deletedBy: (handle: string) => `deleted by ${handle}`,
  deletedUnsigned: "removed by the server (no valid signature)",
  sendBlocked: "Messages in this channel are not being sent: a security check failed (see the warning).",
  /** "alice's client added bob, removed carol" from a signed commit. */
  epochChange(e: EpochChange): string {
    const parts: string[] = [];
    const admitted = (a: EpochChange["added"][number]) =>
      a.admission === "link-unchecked"
        ? `${a.handle} (by link; this device cannot check the link)`
        : a.handle;
    if (e.added.length) parts.push(`added ${e.added.map(admitted).join(", ")}`);
    if (e.removed.length) parts.push(`removed ${e.removed.map((r) => r.handle).join(", ")}`);
    if (e.rekeyed.length) parts.push(`took the new key of ${e.rekeyed.map((r) => r.handle).join(", ")}`);
    if (e.linkChanged) parts.push("made a new secret link");
    if (parts.length === 0) parts.push("rotated the key");
    return `${e.creator.handle}'s client ${parts.join(", ")} (epoch ${e.epochNumber})`;
  },
} as const;
