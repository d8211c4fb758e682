/**
 * happy-dom: the board's note when an ATProto account's key proof could not be published
 * (engineState.auth.proof "failed"): shown with what it means, not while the key reminder is (that one
 * matters more), never once the proof is published, and "Not now" hides it for this tab.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { Board } from "../../../web/features/chat/Board.tsx";
import { ProofNagText } from "../../../web/features/keys/KeyNag.tsx";
import { authUi } from "../../../web/state/auth.ts";
import { engineState } from "../../../web/state/engine.ts";
import { click, installFakeClient, type Mounted, mount, resetState, settle } from "../harness.ts";

let view: Mounted | undefined;

beforeEach(() => {
  resetState();
  installFakeClient();
  sessionStorage.clear();
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  document.body.innerHTML = "";
  authUi.keyCustody = undefined;
});

const nag = () => document.querySelector('[data-testid="proof-nag"]');
const keyNag = () => document.querySelector('[data-testid="key-nag"]');

test("a failed proof is said on the board, and Not now hides it for this tab", async () => {
  authUi.keyCustody = "secured";
  engineState.auth.proof = "failed";
  view = await mount(<Board />);
  await settle(20);
  expect(nag()?.textContent).toContain(ProofNagText.lead);
  expect(nag()?.getAttribute("aria-label")).toBe(ProofNagText.lead);
  const later = [...document.querySelectorAll("button")].find((b) => b.textContent === ProofNagText.later);
  await click(later ?? null);
  expect(nag()).toBeNull();
  await view.unmount();
  view = await mount(<Board />);
  await settle(20);
  expect(nag()).toBeNull();
});

test("not while the key reminder shows, and not once the proof is published", async () => {
  authUi.keyCustody = "unsecured";
  engineState.auth.proof = "failed";
  view = await mount(<Board />);
  await settle(20);
  expect(keyNag()).not.toBeNull();
  expect(nag()).toBeNull();
  await view.unmount();
  authUi.keyCustody = "secured";
  engineState.auth.proof = "published";
  view = await mount(<Board />);
  await settle(20);
  expect(nag()).toBeNull();
});
