import { Limits } from "../../core/protocol/index.ts";
import { isCommonPassword } from "./common-passwords.ts";

/** argon2id with Bun's defaults (64 MiB, t=2): memory-hard, the OWASP first choice. */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}

/**
 * A hash of a random password, verified against when the account does not exist, so a login for an
 * unknown identifier takes as long as one for a known identifier.
 */
let decoyHash: Promise<string> | null = null;
export function decoyVerify(password: string): Promise<boolean> {
  decoyHash ??= hashPassword(crypto.randomUUID());
  return decoyHash.then((h) => verifyPassword(password, h));
}

/** Why a password is refused, or null when it is acceptable. */
export function weakPasswordReason(
  password: string,
  context: { handle: string; email: string },
): string | null {
  if (password.length < Limits.passwordMinLength) {
    return `Password is not strong enough: use at least ${Limits.passwordMinLength} characters`;
  }
  const lower = password.toLowerCase();
  if (isCommonPassword(lower) || new Set(lower).size <= 2) {
    return "Password is not strong enough: it is a common password";
  }
  if (lower === context.handle.toLowerCase() || lower === context.email.toLowerCase()) {
    return "Password is not strong enough: it must differ from your handle and email";
  }
  return null;
}
