// What WsyncClient's own actions sign and check, gathered for one dynamic import (client.ts).
export { isLinkSecret } from "../crypto/epoch-binding.ts";
export { pairSafetyNumber, safetyNumber } from "../crypto/fingerprint.ts";
export { REACTION_RE } from "../crypto/message-format.ts";
export { buildDeletion, buildInvite, signObject } from "../crypto/signed.ts";
