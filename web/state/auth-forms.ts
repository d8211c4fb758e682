import { ApiError } from "../../core/protocol/runtime.ts";
import { authUi } from "./auth.ts";
import { loadClient } from "./engine.ts";

/*
 * What only the sign-in and registration forms do. Kept out of ./auth.ts, which every page of the
 * messaging area loads before its first interaction (issue 28: /sync's JavaScript), where these
 * never run.
 */

/**
 * Spec §8 registration errors, each on the field it is about, by the server's error code (protocol §3):
 * HandleTaken, EmailTaken and WeakPassword name their field; InvalidRequest's message starts with the
 * field its schema check failed on ("handle: 3 to 32 characters…"), whose reason is shown. Matching
 * on words of the message (the spec's first rule) put "Handle is already taken" on `Bad Handle!`.
 */
export function registrationErrors(e: unknown): Record<string, string> {
  if (e instanceof ApiError) {
    if (e.code === "HandleTaken") return { handle: "Handle is already taken" };
    if (e.code === "EmailTaken") return { email: "Email is already registered" };
    if (e.code === "WeakPassword") {
      // The server's reason already starts with the spec's words; a bare reason gets them once.
      const reason = e.message.replace(/^Password is not strong enough:?\s*/i, "");
      return {
        password: reason ? `Password is not strong enough: ${reason}` : "Password is not strong enough",
      };
    }
    if (e.code === "RateLimited")
      return { form: `Too many attempts; try again${e.retryAfter ? ` in ${e.retryAfter} s` : " later"}` };
    if (e.code === "InvalidRequest") {
      const m = /^(handle|email|password)\b[:\s]*(.*)$/i.exec(e.message);
      const field = m?.[1]?.toLowerCase();
      if (field === "handle")
        return { handle: `Invalid handle: ${m?.[2] || "3 to 32 characters of a-z, 0-9 and -"}` };
      if (field === "email") return { email: "Enter a valid email address" };
      if (field === "password") return { password: `Invalid password: ${m?.[2] || "see the rules"}` };
    }
  }
  if (e instanceof Error && /network|reach the server|fetch/i.test(e.message))
    return { form: "Cannot reach the server. Check the connection and try again." };
  return { handle: "Registration failed", email: "Registration failed", password: "Registration failed" };
}

export async function login(identifier: string, password: string): Promise<boolean> {
  authUi.fieldErrors = {};
  try {
    await (await loadClient()).login(identifier, password);
    return true;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message === "Invalid credentials") {
      authUi.fieldErrors = { identifier: "Invalid credentials", password: "Invalid credentials" };
    }
    return false;
  }
}

export async function register(input: { handle: string; email: string; password: string }): Promise<boolean> {
  authUi.fieldErrors = {};
  try {
    authUi.pendingKeys = await (await loadClient()).register(input);
    authUi.showKeysModal = true;
    return true;
  } catch (e) {
    authUi.fieldErrors = registrationErrors(e);
    return false;
  }
}
