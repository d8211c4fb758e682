import { proxy } from "valtio";
import { ApiError } from "../../core/protocol/runtime.ts";
import { engineState, loadClient } from "./engine.ts";

/**
 * The auth slice: the engine's auth state plus the three modals of spec §2.5–2.7 and the
 * registration step between "account created" and "keys saved".
 */
export const authUi = proxy({
  /** Keys made at registration, shown in the keys modal until the user saved them. */
  pendingKeys: null as null | { publicKey: string; privateKey: string },
  showKeysModal: false,
  savingKeys: false,
  /** Field errors of the registration and login forms (spec §8). */
  fieldErrors: {} as Record<string, string>,
});

export const authState = engineState.auth;

/** Spec §8 registration errors, mapped from the server's message to the field it names. */
export function registrationErrors(e: unknown): Record<string, string> {
  const text = e instanceof Error ? e.message.toLowerCase() : "";
  if (e instanceof ApiError && e.code === "HandleTaken") return { handle: "Handle is already taken" };
  if (e instanceof ApiError && e.code === "EmailTaken") return { email: "Email is already registered" };
  if (e instanceof ApiError && e.code === "WeakPassword")
    return { password: "Password is not strong enough" };
  if (text.includes("handle")) return { handle: "Handle is already taken" };
  if (text.includes("email")) return { email: "Email is already registered" };
  if (text.includes("password")) return { password: "Password is not strong enough" };
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

/** "I've Saved My Keys" (spec §4.2): on failure the modal stays open and the error is only logged. */
export async function completeRegistration(): Promise<boolean> {
  authUi.savingKeys = true;
  try {
    await (await loadClient()).completeRegistration();
    authUi.showKeysModal = false;
    authUi.pendingKeys = null;
    return true;
  } catch (e) {
    console.warn("save keys failed", e);
    return false;
  } finally {
    authUi.savingKeys = false;
  }
}

/** The engine stops its socket before it logs out, so its own "session ended" never fires here. */
export async function logout(): Promise<void> {
  await (await loadClient()).logout();
}
