// The public surface of wsync's client cryptography (protocol §5). keypair.ts stays internal; the
// test-only deterministic randomness lives in tests/support/fixed-randomness.ts, behind one hook.
export * from "./base64.ts";
export * from "./bytes.ts";
export * from "./canon.ts";
export * from "./channel-id.ts";
export * from "./commit.ts";
export * from "./create-epoch.ts";
export {
  DEVICE_LINK_CODE_ALPHABET,
  DEVICE_LINK_CODE_LENGTH,
  deviceLinkInfo,
  formatDeviceLinkCode,
  isDeviceLinkCode,
  isDeviceLinkEnvelope,
  type LinkEphemeral,
  linkConfirmation,
  newDeviceLinkCode,
  newLinkEphemeral,
  normalizeDeviceLinkCode,
  type OpenDeviceLinkInput,
  openDeviceLink,
  type SealDeviceLinkInput,
  type SealedDeviceLink,
  sealDeviceLink,
} from "./device-link.ts";
export * from "./epoch.ts";
export {
  checkKeyCommitment,
  type EpochState,
  isLinkSecret,
  keyCommitment,
  openState,
  sealState,
} from "./epoch-binding.ts";
export * from "./errors.ts";
export * from "./file-cipher.ts";
export * from "./file-message.ts";
export * from "./fingerprint.ts";
export * from "./identity.ts";
export {
  inviteLinkInfo,
  isSealedLinkShape,
  type OpenInviteLinkInput,
  openInviteLink,
  type SealInviteLinkInput,
  sealInviteLink,
} from "./invite-link.ts";
export * from "./link.ts";
export {
  type DecryptedMessage,
  type DecryptMessageInput,
  decryptMessage,
  type EncryptedMessage,
  type EncryptMessageInput,
  encryptMessage,
} from "./message.ts";
export {
  type AadFields,
  isChain,
  type MessageChain,
  type MessageRef,
  messageAad,
  messageSigningBytes,
  newClientMsgId,
  newDeviceId,
  type Plaintext,
  REACTION_RE,
  type RichPlaintext,
  type TextPlaintext,
} from "./message-format.ts";
export * from "./public-key.ts";
export * from "./random.ts";
export * from "./signed.ts";
export {
  type OpenTrustStateInput,
  openTrustState,
  parseTrustStateBlob,
  type SealTrustStateInput,
  sealTrustState,
  type TrustStateBlob,
  trustStateAad,
  trustStateInfo,
} from "./trust-seal.ts";
export * from "./v3.ts";
export * from "./verify-memo.ts";
export {
  epochKeyInfo,
  type LabelVersion,
  unwrapEpochKey,
  type WrapContext,
  type WrapEpochKeyInput,
  type WrapRecipient,
  wrapEpochKey,
  wrapEpochKeyForMembers,
} from "./wrap.ts";
