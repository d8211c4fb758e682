import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { authUi } from "../../../web/state/auth.ts";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  settle,
  submit,
  typeInto,
  until,
} from "../harness.ts";
import { ME, MORPHEUS, member, openChannel, resetChat, TRINITY, view, warning } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const crew = () => [
  member(ME, "neo.wsync.local", { isOwner: true, online: true }),
  member(TRINITY, "trinity.wsync.local", { online: true }),
  member(MORPHEUS, "morpheus.wsync.local", { online: false }),
];

async function show(id: string, mobile = false) {
  ui = await mount(
    <>
      <MembersSidebar channelId={id} mobile={mobile} />
      <Toasts />
    </>,
  );
}

/** The rows under a group heading, up to the next heading. */
function group(title: string): HTMLElement[] {
  const h = ui.$$("h4").find((e) => e.textContent === title);
  const list = h?.nextElementSibling;
  return list ? [...list.querySelectorAll<HTMLElement>(".member")] : [];
}

describe("CONNECTED_NODES", () => {
  test("counts the members and groups them into OPERATORS (tagged OP) and MEMBERS, with presence dots", async () => {
    await show(openChannel({ members: crew() }));
    expect(ui.$("h3")?.textContent).toBe("CONNECTED_NODES [3]");
    const ops = group("OPERATORS");
    const rest = group("MEMBERS");
    const line = (r: HTMLElement) => r.querySelector(".member-line")?.textContent;
    expect(ops.map(line)).toEqual(["neo (you)OP"]);
    expect(ops[0]?.querySelector(".op")?.textContent).toBe("OP");
    expect(rest.map(line)).toEqual(["trinity", "morpheus"]);
    // Everyone but oneself can be written to from their row (issue 30).
    const message = (r: HTMLElement) =>
      r.querySelector(".member-message")?.getAttribute("aria-label") ?? null;
    expect([...ops, ...rest].map(message)).toEqual([null, "Message trinity", "Message morpheus"]);
    expect(rest.some((r) => r.querySelector(".op"))).toBe(false);
    const dots = [...ops, ...rest].map((r) => r.querySelector(".dot")?.className);
    expect(dots).toEqual(["dot on", "dot on", "dot off"]);
  });

  test("presence changes move the dot", async () => {
    const id = openChannel({ members: crew() });
    await show(id);
    (view(id).members[2] as { online: boolean }).online = true;
    await settle();
    expect(group("MEMBERS")[1]?.querySelector(".dot")?.className).toBe("dot on");
  });
});

describe("invite", () => {
  test("hidden on a public channel", async () => {
    await show(openChannel({ members: crew() }, "public"));
    expect(ui.$(".invite")).toBeNull();
    expect(ui.text()).not.toContain("SEND");
  });

  test("on an invite channel it needs a handle, sends it, and says so", async () => {
    const id = openChannel({ members: crew() }, "invite");
    fake.impl.invite = async () => undefined;
    await show(id);
    const send = ui.$<HTMLButtonElement>(".invite button") as HTMLButtonElement;
    expect(send.textContent).toBe("SEND");
    expect(send.disabled).toBe(true);
    await submit(ui.$(".invite") as HTMLFormElement);
    expect(callsOf(fake, "invite")).toHaveLength(0);
    await typeInto(ui.$(".invite input") as HTMLInputElement, "  oracle ");
    await submit(ui.$(".invite") as HTMLFormElement);
    await settle(20);
    expect(callsOf(fake, "invite")[0]?.args).toEqual([id, "oracle"]);
    expect(document.body.textContent).toContain("Invite sent to oracle");
    expect((ui.$(".invite input") as HTMLInputElement).value).toBe("");
  });

  test("on a secret channel too; a refused invite shows the server's reason", async () => {
    const id = openChannel({ members: crew() }, "secret");
    fake.impl.invite = async () => {
      throw new Error("No such user");
    };
    await show(id);
    await typeInto(ui.$(".invite input") as HTMLInputElement, "smith");
    await submit(ui.$(".invite") as HTMLFormElement);
    await settle(20);
    expect(document.body.textContent).toContain("No such user");
    expect((ui.$(".invite input") as HTMLInputElement).value).toBe("smith");
  });
});

describe("comparing keys", () => {
  const numbers = (changed: boolean) => ({
    mine: "11111 22222 33333 44444 55555 66666",
    theirs: "77777 88888 99999 00000 12345 67890",
    pair: "11111 22222 33333 44444 55555 66666 77777 88888 99999 00000 12345 67890",
    theirKey: "BNEWKEY",
    theirKeyChanged: changed,
  });

  test("a member's fingerprint, then on demand the safety numbers", async () => {
    fake.impl.safetyNumbers = async () => numbers(false);
    await show(openChannel({ members: crew() }));
    await click(group("MEMBERS")[0]?.querySelector(".member-line") ?? null);
    expect(ui.$(".keys")?.textContent).toContain("0123 4567 89ab cdef 0123 4567 89ab cdef");
    expect(callsOf(fake, "safetyNumbers")).toHaveLength(0);
    const btn = [...ui.$$<HTMLButtonElement>(".keys button")].find((b) => b.textContent === "SAFETY_NUMBERS");
    await click(btn ?? null);
    await settle();
    expect(callsOf(fake, "safetyNumbers")[0]?.args).toEqual([TRINITY]);
    const dd = ui.$$(".keys dd").map((d) => d.textContent);
    expect(dd).toEqual([numbers(false).mine, numbers(false).theirs, numbers(false).pair]);
    expect(ui.text()).not.toContain("Accept new key");
  });

  test("a changed key: opened from the warning, numbers load at once; Accept new key trusts the shown key", async () => {
    fake.impl.safetyNumbers = async () => numbers(true);
    fake.impl.acceptKeyChange = async () => undefined;
    await show(
      openChannel({
        members: crew(),
        warnings: [warning("key-changed", { did: MORPHEUS, handle: "morpheus" })],
      }),
    );
    expect(group("MEMBERS")[1]?.querySelector(".warn")).not.toBeNull();
    panel.compare = MORPHEUS;
    await settle();
    await settle();
    expect(callsOf(fake, "safetyNumbers")[0]?.args).toEqual([MORPHEUS]);
    const accept = ui.$$<HTMLButtonElement>(".keys button").find((b) => b.textContent === "Accept new key");
    await click(accept ?? null);
    await settle();
    expect(callsOf(fake, "acceptKeyChange")[0]?.args).toEqual([MORPHEUS, "BNEWKEY"]);
  });

  test("an owner can kick members but not operators; a member cannot kick", async () => {
    const id = openChannel({ members: crew() });
    fake.impl.kick = async () => undefined;
    await show(id);
    await click(group("OPERATORS")[0]?.querySelector(".member-line") ?? null);
    expect(ui.text()).not.toContain("KICK");
    await click(group("MEMBERS")[0]?.querySelector(".member-line") ?? null);
    const kick = ui.$$<HTMLButtonElement>(".keys button").find((b) => b.textContent === "KICK");
    await click(kick ?? null);
    expect(callsOf(fake, "kick")[0]?.args).toEqual([id, TRINITY]);
    await ui.unmount();
    view(id).members = [
      member(ME, "neo.wsync.local"),
      member(TRINITY, "trinity.wsync.local", { isOwner: true }),
      member(MORPHEUS, "morpheus.wsync.local"),
    ];
    await show(id);
    await click(group("MEMBERS")[1]?.querySelector(".member-line") ?? null);
    expect(ui.$(".keys")).not.toBeNull();
    expect(ui.text()).not.toContain("KICK");
  });
});

describe("info panel", () => {
  test("AUTH_STATUS, ENCRYPTION from the engine's key state, USER_DATA without the suffix", async () => {
    // The server knows the public key; this device has no private key for it (validation pending).
    engineState.auth.keyState = "validate";
    await show(openChannel({ members: crew() }));
    const info = () => ui.$("[data-testid=info-panel]")?.textContent ?? "";
    expect(info()).toContain("AUTH_STATUSAUTHORIZED");
    expect(info()).toContain("PUBLIC_KEY: PRESENT");
    expect(info()).toContain("PRIVATE_KEY: MISSING");
    expect(info()).toContain("HANDLE: neo");
    expect(info()).not.toContain("neo.wsync.local");
    expect(info()).toContain(`NODE_ID: ${ME}`);
    engineState.auth.keyState = "ready";
    await settle();
    expect(info()).toContain("PRIVATE_KEY: PRESENT");
    if (engineState.auth.user) engineState.auth.user.publicKey = null;
    await settle();
    expect(info()).toContain("PUBLIC_KEY: MISSING");
    // Nothing is read from storage any more: the engine's state alone decides.
    expect(localStorage.getItem("privateKey")).toBeNull();
    engineState.auth.isAuthenticated = false;
    await settle();
    expect(info()).toContain("UNAUTHORIZED");
  });

  test("DISCONNECT asks first (what is lost, the backup), then logs out and goes to /login", async () => {
    const went: string[] = [];
    const assign = window.location.assign;
    (window.location as { assign: (u: string) => void }).assign = (u) => went.push(u);
    fake.impl.logout = async () => undefined;
    fake.impl.exportPrivateKey = async () => null;
    fake.impl.keyBackupStatus = async () => ({ kind: "passphrase", updatedAt: Date.now() });
    const body = () => document.body.textContent ?? "";
    const button = (name: string) =>
      [...document.querySelectorAll("button")].find((b) => b.textContent === name) ?? null;
    try {
      await show(openChannel({ members: crew() }));
      await click(button("DISCONNECT"));
      // The dialog is a lazy chunk, and it asks the engine about the backup: wait for both, not a time.
      await until(() => body().includes("A key backup sealed"), 20_000);
      expect(callsOf(fake, "logout")).toHaveLength(0);
      const dialog = document.querySelector('[role="dialog"]');
      expect(dialog?.getAttribute("aria-labelledby")).toBe("logout-title");
      expect(body()).toContain("your private key");
      expect(body()).toContain("the channel keys (epoch keys) stored here");
      expect(body()).toContain("A key backup sealed with a recovery passphrase is on the server");
      // Cancel keeps everything.
      await click(button("Cancel"));
      expect(document.querySelector('[role="dialog"]')).toBeNull();
      expect(callsOf(fake, "logout")).toHaveLength(0);
      await click(button("DISCONNECT"));
      await until(() => button("Log out") !== null, 20_000);
      await click(button("Log out"));
      await until(() => went.length > 0, 20_000);
      expect(callsOf(fake, "logout")).toHaveLength(1);
      expect(went).toEqual(["/login"]);
    } finally {
      (window.location as { assign: typeof assign }).assign = assign;
    }
  });

  test("KEY_BACKUP opens the board's Key backup dialog", async () => {
    authUi.keyBackupOpen = false;
    await show(openChannel({ members: crew() }));
    await click(ui.$$<HTMLButtonElement>("button").find((b) => b.textContent === "KEY_BACKUP") ?? null);
    expect(authUi.keyBackupOpen).toBe(true);
    authUi.keyBackupOpen = false;
  });
});

describe("mobile drawer", () => {
  test("slides in with uiState.membersOpen; the info button's mode shows the info panel alone", async () => {
    await show(openChannel({ members: crew() }), true);
    const aside = () => ui.$("[data-testid=members]") as HTMLElement;
    expect(aside().className).toBe("members drawer right");
    uiState.membersOpen = true;
    await settle();
    expect(aside().className).toBe("members drawer right open");
    expect(ui.text()).toContain("CONNECTED_NODES");
    expect(ui.$("[data-testid=info-panel]")).toBeNull();
    panel.info = true;
    await settle();
    expect(ui.text()).not.toContain("CONNECTED_NODES");
    expect(ui.$("[data-testid=info-panel]")).not.toBeNull();
    await click(ui.$(".drawer-close"));
    expect(uiState.membersOpen).toBe(false);
  });
});
