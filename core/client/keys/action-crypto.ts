// What WsyncClient's own actions sign and check, gathered for one dynamic import (client.ts).
export { isLinkSecret } from "../../crypto/epoch-binding.ts";
export { pairSafetyNumber, safetyNumber } from "../../crypto/fingerprint.ts";
export { sealInviteLink } from "../../crypto/invite-link.ts";
export { REACTION_RE } from "../../crypto/message-format.ts";
export {
  buildDeletion,
  buildDeletionV3,
  buildInvite,
  buildInviteV3,
  signObject,
} from "../../crypto/signed.ts";
export { buildReadMarker, signReadMarker, verifyReadMarker } from "../../crypto/v3.ts";
