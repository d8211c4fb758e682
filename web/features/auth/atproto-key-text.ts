/**
 * The short key-setup texts for an account signed in with ATProto (docs/atproto.md): its chat keys
 * are not in the ATProto account, so the keys modal and the validation modal say where they come from.
 */
export const AtprotoKeyText = {
  /** The keys modal, on the account's first sign-in (new keys made in this browser). */
  firstKeys:
    "You signed in with ATProto. Your chat keys are made here, in this browser: your ATProto account does not hold them and your PDS never sees them. On another device, restore them from the key backup or link that device.",
  /** The validation modal, on another device. */
  newDevice:
    "Signing in with ATProto does not bring your chat keys: restore them from your key backup, or link this device from one that has them.",
} as const;
