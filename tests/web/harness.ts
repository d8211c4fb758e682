/**
 * Component-test helpers: mount a React tree into the happy-dom document (tests/web/dom.ts must be
 * imported first), drive inputs the way a user does, and stand in for the engine with a fake that
 * works on engineState directly and records every call.
 */
import "./dom.ts";
import { act, type ReactNode } from "react";
import type { Root } from "react-dom/client";
import type { WsyncClient } from "../../core/client/index.ts";
import { Emitter, resetState as resetEngineState } from "../../core/client/view/state.ts";
import { BASE32_ALPHABET, type Channel, type ChannelType } from "../../core/protocol/runtime.ts";
import { authUi } from "../../web/state/auth.ts";
import { setBackupStatus } from "../../web/state/backup-status.ts";
import { dangerouslySetClient, engineState } from "../../web/state/engine.ts";
import { SIDEBAR_DEFAULT, uiState } from "../../web/state/ui.ts";

// react-dom is CommonJS, which Bun evaluates before the ES modules that import it, so a static
// import would see no DOM (and fall back to IE-era change events). Loaded here, after dom.ts ran.
const { createRoot } = await import("react-dom/client");

export interface Mounted {
  el: HTMLElement;
  root: Root;
  $: <E extends Element = HTMLElement>(selector: string) => E | null;
  $$: <E extends Element = HTMLElement>(selector: string) => E[];
  text: () => string;
  unmount: () => Promise<void>;
}

export async function mount(node: ReactNode): Promise<Mounted> {
  const el = document.createElement("div");
  document.body.append(el);
  const root = createRoot(el);
  await act(async () => root.render(node));
  return {
    el,
    root,
    $: (s) => el.querySelector(s),
    $$: <E extends Element = HTMLElement>(s: string) => [...el.querySelectorAll(s)] as E[],
    text: () => el.textContent ?? "",
    unmount: async () => {
      await act(async () => root.unmount());
      el.remove();
    },
  };
}

/** Lets promises, valtio's batched notifications and React's updates settle. */
export async function settle(ms = 0): Promise<void> {
  await act(async () => {
    await new Promise((r) => setTimeout(r, ms));
  });
}

/** Types into a React-controlled input or textarea (the native setter, so React sees the change). */
export async function typeInto(input: HTMLInputElement | HTMLTextAreaElement, value: string): Promise<void> {
  const proto = Object.getPrototypeOf(input) as object;
  const setter = Object.getOwnPropertyDescriptor(proto, "value")?.set;
  await act(async () => {
    setter?.call(input, value);
    input.dispatchEvent(new window.Event("input", { bubbles: true }) as unknown as Event);
  });
}

export async function submit(form: HTMLFormElement): Promise<void> {
  await act(async () => {
    form.dispatchEvent(new window.Event("submit", { bubbles: true, cancelable: true }) as unknown as Event);
  });
  await settle();
}

export async function click(target: Element | null): Promise<void> {
  if (!target) throw new Error("nothing to click");
  await act(async () => {
    (target as HTMLElement).click();
  });
  await settle();
}

export async function key(target: Element | null, k: string, init: KeyboardEventInit = {}): Promise<void> {
  if (!target) throw new Error("no key target");
  await act(async () => {
    target.dispatchEvent(
      new window.KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init }) as never,
    );
  });
  await settle();
}

let seq = 0;
function base32(n: number): string {
  let out = "";
  for (; n > 0; n = Math.floor(n / 32)) out = (BASE32_ALPHABET[n % 32] ?? "") + out;
  return out;
}

export function channel(
  name: string,
  type: ChannelType = "public",
  extra: Partial<Omit<Channel, "value">> = {},
): Channel {
  // A valid channel id: 16 characters of lowercase base32.
  const id = extra.id ?? base32(++seq).padStart(16, "a");
  return {
    id,
    uri: `at://did:plc:${"o".repeat(24)}/chat.wsync.channel/${id}`,
    value: {
      $type: "chat.wsync.channel",
      name,
      type,
      description: "",
      createdAt: "2026-01-01T00:00:00.000Z",
    },
    owner: null,
    memberCount: 1,
    messageCount: 0,
    lastActivity: null,
    isMember: true,
    role: "member",
    ...extra,
  };
}

export interface FakeClient {
  calls: { method: string; args: unknown[] }[];
  events: Emitter<import("../../core/client/view/state.ts").ClientEvents>;
  /** Replace a method's behaviour, e.g. to fail or to hold a promise open. */
  impl: Record<string, (...args: unknown[]) => Promise<unknown>>;
  /** Plain properties of the engine (e.g. unconfirmedKeys), read as they are. */
  props: Record<string, unknown>;
}

/**
 * A stand-in engine: refreshChannels returns engineState.channels, open/join make the channel
 * current, createChannel returns a link for secret channels. Installed with dangerouslySetClient.
 */
export function installFakeClient(): FakeClient {
  const fake: FakeClient = {
    calls: [],
    events: new Emitter(),
    props: {},
    impl: {
      refreshChannels: async () => engineState.channels,
      refreshReadMarkers: async () => engineState.readMarkers,
      openInBackground: async () => undefined,
      markRead: async (id, seq) => {
        engineState.readMarkers[String(id)] = Number(seq);
      },
      sendTyping: async () => undefined,
      open: async (id) => {
        engineState.currentChannelId = String(id);
      },
      join: async (input) => {
        engineState.currentChannelId = String(input).split("#")[0] ?? null;
      },
      createChannel: async (input) => {
        const { name, type } = input as { name: string; type: ChannelType };
        const c = channel(name, type);
        return { channel: c, link: type === "secret" ? `http://localhost/sync/join/${c.id}#tok3n` : null };
      },
    },
  };
  const proxy = new Proxy(fake, {
    get(target, prop) {
      if (prop === "events" || prop === "state") return prop === "events" ? target.events : engineState;
      if (Object.hasOwn(target.props, prop)) return target.props[String(prop)];
      const fn = target.impl[String(prop)];
      if (!fn) return undefined;
      return (...args: unknown[]) => {
        target.calls.push({ method: String(prop), args });
        return fn(...args);
      };
    },
  });
  dangerouslySetClient(proxy as unknown as WsyncClient);
  return fake;
}

export const callsOf = (fake: FakeClient, method: string) => fake.calls.filter((c) => c.method === method);

/** A signed-in user with keys, on a fresh state. */
export function resetState(): void {
  resetEngineState(engineState);
  engineState.auth.user = {
    did: `did:plc:${"a".repeat(24)}`,
    handle: "neo.wsync.local",
    email: "neo@example.com",
    publicKey: "BPUBKEY",
  };
  engineState.auth.isAuthenticated = true;
  engineState.auth.keyState = "ready";
  engineState.connection = "connected";
  Object.assign(uiState, {
    sidebarOpen: false,
    membersOpen: false,
    sidebarWidth: SIDEBAR_DEFAULT,
    networkView: "terminal",
    createDialogOpen: false,
  });
  Object.assign(authUi, {
    pendingKeys: null,
    showKeysModal: false,
    savingKeys: false,
    saveError: null,
    fieldErrors: {},
    replacingKeys: false,
    newKeys: null,
    keyBackupOpen: false,
  });
  // Not read yet on this "page".
  setBackupStatus(null);
  authUi.backupStatus = undefined;
  localStorage.clear();
  document.body.innerHTML = "";
}

/** Settles until `check` holds (real crypto, lazy chunks), failing after `ms`. */
export async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting for the page");
    await settle(10);
  }
}
