/**
 * What the CLI says when the server ends its session (the `session-ended` event): signed out
 * elsewhere, or the account disabled by the server's operator or deleted (WsClose 4423, 4410).
 */
export function sessionEndedText(reason?: "account-disabled" | "account-deleted"): string {
  if (reason === "account-disabled")
    return "wsync: the session ended: this account is disabled by the server's operator";
  if (reason === "account-deleted") return "wsync: the session ended: this account was deleted";
  return "wsync: the session ended (run `wsync login`)";
}
