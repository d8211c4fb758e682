import { afterEach, beforeEach, expect, test } from "bun:test";
import { CreateChannelDialog } from "../../../web/features/chat/CreateChannelDialog.tsx";
import { engineState } from "../../../web/state/engine.ts";
import { uiState } from "../../../web/state/ui.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  key,
  type Mounted,
  mount,
  resetState,
  settle,
  submit,
  typeInto,
} from "../harness.ts";

let view: Mounted;
let fake: FakeClient;

const nameInput = () => view.$<HTMLInputElement>('input[name="name"]') as HTMLInputElement;
const createButton = () => view.$<HTMLButtonElement>('button[type="submit"]');
const form = () => view.$<HTMLFormElement>("form") as HTMLFormElement;
const buttonTexts = () => view.$$(".actions button").map((b) => b.textContent);

async function open() {
  uiState.createDialogOpen = true;
  view = await mount(<CreateChannelDialog />);
}

beforeEach(() => {
  resetState();
  fake = installFakeClient();
});
afterEach(async () => {
  await view?.unmount();
});

test("hidden until opened; fields, exact type labels, public by default", async () => {
  view = await mount(<CreateChannelDialog />);
  expect(view.el.innerHTML).toBe("");
  uiState.createDialogOpen = true;
  await settle();
  expect(view.$('[role="dialog"] h2')?.textContent).toBe("Create Channel");
  expect(view.$$(".field > span:first-child").map((s) => s.textContent)).toEqual([
    "Channel Name",
    "Description (Optional)",
  ]);
  expect(view.$("legend")?.textContent).toBe("Channel Type");
  expect(view.$$(".cc-type").map((l) => l.textContent)).toEqual([
    "Public (anyone can join and see)",
    "Invite (+i, users can only join with an invite)",
    "Secret (+s, hidden from the list, invite only)",
  ]);
  expect(view.$<HTMLInputElement>('input[type="radio"]:checked')?.value).toBe("public");
  expect(buttonTexts()).toEqual(["Cancel", "Create"]);
  expect(document.activeElement).toBe(nameInput());
});

test("Create needs a non-empty trimmed name", async () => {
  await open();
  expect(createButton()?.disabled).toBe(true);
  await typeInto(nameInput(), "    ");
  expect(createButton()?.disabled).toBe(true);
  await submit(form());
  expect(callsOf(fake, "createChannel")).toHaveLength(0);
  await typeInto(nameInput(), "  lobby ");
  expect(createButton()?.disabled).toBe(false);
});

test("Create is refused without a public key", async () => {
  if (engineState.auth.user) engineState.auth.user.publicKey = null;
  await open();
  await typeInto(nameInput(), "lobby");
  expect(createButton()?.disabled).toBe(true);
  await submit(form());
  expect(callsOf(fake, "createChannel")).toHaveLength(0);
});

test("a public channel: trimmed fields are sent, the dialog closes", async () => {
  await open();
  await typeInto(nameInput(), "  lobby ");
  await typeInto(view.$<HTMLTextAreaElement>("textarea") as HTMLTextAreaElement, "  hello  ");
  await submit(form());
  expect(callsOf(fake, "createChannel").map((c) => c.args[0])).toEqual([
    { name: "lobby", type: "public", description: "hello" },
  ]);
  expect(uiState.createDialogOpen).toBe(false);
  expect(view.el.innerHTML).toBe("");
  // Opened again: an empty form.
  uiState.createDialogOpen = true;
  await settle();
  expect(nameInput().value).toBe("");
});

test("a secret channel: the link with Copy and the note, Cancel becomes Close, dialog stays open", async () => {
  await open();
  await typeInto(nameInput(), "cabal");
  await click(view.$('input[value="secret"]'));
  expect(view.$<HTMLInputElement>('input[type="radio"]:checked')?.value).toBe("secret");
  let release = () => {};
  const real = fake.impl.createChannel;
  fake.impl.createChannel = (input) =>
    new Promise((r) => {
      release = () => void real?.(input).then(r);
    });
  await submit(form());
  // While loading: the spinner, and no second submission.
  expect(createButton()?.querySelector(".spinner-dot")).not.toBeNull();
  expect(createButton()?.disabled).toBe(true);
  await submit(form());
  expect(callsOf(fake, "createChannel")).toHaveLength(1);
  release();
  await settle();
  expect(uiState.createDialogOpen).toBe(true);
  expect(view.$(".cc-link label")?.textContent).toBe("Channel Link");
  const link = view.$<HTMLInputElement>("#cc-link") as HTMLInputElement;
  expect(link.readOnly).toBe(true);
  expect(link.value).toMatch(/^http:\/\/localhost\/sync\/join\/[a-z2-7]{16}#tok3n$/);
  expect(view.$(".cc-note")?.textContent).toBe(
    "Share this link with people you want to invite to the channel",
  );
  expect(buttonTexts()).toEqual(["Close"]);
  const copy = view.$(".cc-copy button");
  expect(copy?.textContent).toBe("Copy");
  await click(copy);
  expect(copy?.textContent).toBe("Copied!");
  expect(await navigator.clipboard.readText()).toBe(link.value);
  await click(view.$$(".actions button").find((b) => b.textContent === "Close") ?? null);
  expect(uiState.createDialogOpen).toBe(false);
});

test("a failure shows the server's message in the dialog, or the spec's fallback", async () => {
  fake.impl.createChannel = async () => {
    throw new Error("Channel name is already taken");
  };
  await open();
  await typeInto(nameInput(), "lobby");
  await submit(form());
  expect(view.$('[role="alert"]')?.textContent).toBe("Channel name is already taken");
  expect(uiState.createDialogOpen).toBe(true);
  expect(createButton()?.disabled).toBe(false);
  fake.impl.createChannel = async () => {
    throw new Error("");
  };
  await submit(form());
  expect(view.$('[role="alert"]')?.textContent).toBe("Failed to create channel");
});

test("Cancel and Escape close the dialog", async () => {
  await open();
  await click(view.$$(".actions button")[0] ?? null);
  expect(uiState.createDialogOpen).toBe(false);
  uiState.createDialogOpen = true;
  await settle();
  await key(nameInput(), "Escape");
  expect(uiState.createDialogOpen).toBe(false);
});
