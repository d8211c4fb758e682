/** A send refused because a protocol v2 check failed; its message is the warning's text. */
export class SendBlockedError extends Error {
  override readonly name = "SendBlockedError";
}
