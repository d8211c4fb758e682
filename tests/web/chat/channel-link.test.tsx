/**
 * A secret channel's link in the info panel (protocol §7): members see it with Copy, only the owner
 * can rotate it, and a link the engine replaces (after a kick, or a rotation) shows at once.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { uiState } from "../../../web/state/ui.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  settle,
} from "../harness.ts";
import { ME, member, openChannel, resetChat, TRINITY, view } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const LINK = "http://localhost:3400/sync/join/aaaaaaaaaaaaaaab#c2VjcmV0LWxpbmstb25l";
const NEW_LINK = "http://localhost:3400/sync/join/aaaaaaaaaaaaaaab#bmV3LWxpbmstc2VjcmV0";

/** I am the owner, or a member of a channel Trinity owns. */
const crew = (owner: boolean) => [
  member(ME, "neo.wsync.local", { isOwner: owner, online: true }),
  member(TRINITY, "trinity.wsync.local", { isOwner: !owner, online: true }),
];

async function show(id: string, mobile = false) {
  ui = await mount(
    <>
      <MembersSidebar channelId={id} mobile={mobile} />
      <Toasts />
    </>,
  );
}

const section = () => ui.$("[data-testid=info-panel] [data-testid=channel-link]");
const field = () => ui.$<HTMLInputElement>("[data-testid=channel-link] input");
const button = (name: string) =>
  ui.$$<HTMLButtonElement>("[data-testid=channel-link] button").find((b) => b.textContent === name) ?? null;

describe("secret link", () => {
  test("a member sees the link and copies it; no rotate control", async () => {
    await show(openChannel({ members: crew(false), link: LINK }, "secret"));
    expect(section()?.querySelector("h4")?.textContent).toBe("CHANNEL_LINK");
    expect(field()?.value).toBe(LINK);
    expect(field()?.readOnly).toBe(true);
    await click(button("Copy"));
    expect(button("Copied!")).not.toBeNull();
    expect(await navigator.clipboard.readText()).toBe(LINK);
    expect(button("Rotate link")).toBeNull();
  });

  test("the owner rotates it through the engine; the new link replaces the old one", async () => {
    const id = openChannel({ members: crew(true), link: LINK }, "secret");
    fake.impl.rotateLink = async () => {
      view(id).link = NEW_LINK;
      return NEW_LINK;
    };
    await show(id);
    await click(button("Copy"));
    await click(button("Rotate link"));
    await settle();
    expect(callsOf(fake, "rotateLink").map((c) => c.args)).toEqual([[id]]);
    expect(field()?.value).toBe(NEW_LINK);
    // "Copied!" was about the old link.
    expect(button("Copy")).not.toBeNull();
  });

  test("a refused rotation says why", async () => {
    const id = openChannel({ members: crew(true), link: LINK }, "secret");
    fake.impl.rotateLink = async () => {
      throw new Error("Only the owner can do that");
    };
    await show(id);
    await click(button("Rotate link"));
    await settle(20);
    expect(document.body.textContent).toContain("Only the owner can do that");
    expect(field()?.value).toBe(LINK);
    expect(button("Rotate link")?.disabled).toBe(false);
  });

  test("a link the engine makes by itself (after a kick) shows for the remaining members", async () => {
    const id = openChannel({ members: crew(false), link: LINK }, "secret");
    await show(id);
    view(id).link = NEW_LINK;
    await settle();
    expect(field()?.value).toBe(NEW_LINK);
  });

  test("no link known and not the owner: nothing; the owner can still make one", async () => {
    const id = openChannel({ members: crew(false), link: null }, "secret");
    await show(id);
    expect(section()).toBeNull();
    await ui.unmount();
    view(id).members = crew(true);
    await show(id);
    expect(field()).toBeNull();
    expect(button("Rotate link")).not.toBeNull();
  });

  test("public and invite channels have no link section", async () => {
    for (const type of ["public", "invite"] as const) {
      await show(openChannel({ members: crew(true), link: LINK }, type));
      expect(section()).toBeNull();
      expect(ui.text()).not.toContain("Rotate link");
      await ui.unmount();
    }
  });

  test("on mobile it is in the info drawer", async () => {
    await show(openChannel({ members: crew(false), link: LINK }, "secret"), true);
    uiState.membersOpen = true;
    panel.info = true;
    await settle();
    expect(field()?.value).toBe(LINK);
  });
});
