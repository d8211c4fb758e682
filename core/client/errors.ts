/** A send refused because a protocol v2 check failed; its message is the warning's text. */
export class SendBlockedError extends Error {
  override readonly name = "SendBlockedError";
}

/**
 * A channel with no epoch yet, which this user does not own: epoch 1 is the owner's client's to make
 * (protocol §5; clients accept it from no one else, and the server refuses it), so nothing can be sent
 * until it exists.
 */
export class AwaitingOwnerKeysError extends Error {
  override readonly name = "AwaitingOwnerKeysError";
}
