/**
 * happy-dom tests of /sync/qr: tabs, Georgian text, no stored key (then the key backup), unreadable
 * pictures, and a picture checked against the account's public key.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  RouterProvider,
} from "@tanstack/react-router";
import { BackupFlowText } from "../../../core/client/account/key-backup-flow.ts";
import { generateIdentity } from "../../../core/crypto/index.ts";
import { KeyBackupError, KeyBackupText } from "../../../core/crypto/key-backup.ts";
import { IMAGE_READ_FAILED } from "../../../web/features/auth/PrivateKeyValidationModal.tsx";
import { checkPicture, KeyImagePage } from "../../../web/features/keys/KeyImagePage.tsx";
import { KeyImageText as T } from "../../../web/features/keys/text.ts";
import { engineState } from "../../../web/state/engine.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  resetState,
  settle,
  submit,
  typeInto,
} from "../harness.ts";

let view: Mounted | undefined;
let fake: FakeClient;

beforeEach(() => {
  resetState();
  fake = installFakeClient();
  fake.impl.exportPrivateKey = async () => null;
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
});

async function page() {
  const root = createRootRoute();
  const qr = createRoute({ getParentRoute: () => root, path: "/sync/qr", component: KeyImagePage });
  const router = createRouter({
    routeTree: root.addChildren([qr]),
    history: createMemoryHistory({ initialEntries: ["/sync/qr"] }),
  });
  view = await mount(<RouterProvider router={router} />);
  await settle(10);
  return view;
}

const tab = (v: Mounted, name: string) => v.$$('[role="tab"]').find((b) => b.textContent === name) ?? null;

test("Generate and Read tabs, in Georgian", async () => {
  const v = await page();
  expect(v.$('[data-testid="key-image-page"]')?.getAttribute("lang")).toBe("ka");
  expect(v.$("h1")?.textContent).toBe(T.title);
  expect(tab(v, T.generateTab)?.getAttribute("aria-selected")).toBe("true");
  await click(tab(v, T.readTab));
  expect(tab(v, T.readTab)?.getAttribute("aria-selected")).toBe("true");
  expect(v.$('input[name="keyImage"]')).not.toBeNull();
  expect(v.text()).toContain(T.pick);
});

test("generate with no private key here and no backup on the server says so", async () => {
  fake.impl.keyBackupStatus = async () => null;
  engineState.auth.keyState = "validate";
  const v = await page();
  await click(v.$$("button").find((b) => b.textContent === T.generate) ?? null);
  await settle(10);
  expect(v.$('[data-testid="key-image-result"]')?.textContent).toBe(T.noKey);
  expect(v.text()).toContain(T.noBackup);
  expect(v.$('input[name="backupSecret"]')).toBeNull();
  expect(fake.calls.some((c) => c.method === "exportPrivateKey")).toBe(true);
});

test("a key held here but not exportable, and no backup: says it is held, never 'no private key' (issue 28)", async () => {
  fake.impl.keyBackupStatus = async () => null;
  engineState.auth.keyState = "ready";
  const v = await page();
  await click(v.$$("button").find((b) => b.textContent === T.generate) ?? null);
  await settle(10);
  expect(v.$('[data-testid="key-image-result"]')?.textContent).toBe(T.heldNotExportable);
  expect(v.text()).toContain(T.heldHint);
  expect(v.text()).not.toContain(T.noKey);
  expect(v.$('input[name="backupSecret"]')).toBeNull();
});

test("generate uses the key the page can export, without asking for the backup", async () => {
  const { privateKey } = await generateIdentity();
  fake.impl.exportPrivateKey = async () => privateKey;
  fake.impl.keyBackupStatus = async () => null;
  const v = await page();
  await click(v.$$("button").find((b) => b.textContent === T.generate) ?? null);
  await settle(20);
  expect(callsOf(fake, "keyBackupStatus")).toHaveLength(0);
  expect(v.$('input[name="backupSecret"]')).toBeNull();
  // happy-dom has no 2D canvas: the picture itself is drawn only in a browser (tests/e2e/key-image).
  expect<(string | undefined)[]>([T.generateFailed, undefined]).toContain(
    v.$('[data-testid="key-image-result"]')?.textContent,
  );
});

test("generate without an exportable key asks for the backup passphrase: wrong, throttled, then right", async () => {
  const { privateKey } = await generateIdentity();
  fake.impl.keyBackupStatus = async () => ({ kind: "passphrase", updatedAt: Date.now() });
  const answers: (() => Promise<string>)[] = [
    async () => {
      throw new KeyBackupError("wrong-secret", KeyBackupText.wrongSecret);
    },
    async () => {
      throw new Error(BackupFlowText.tooManyAttempts(8));
    },
    async () => {
      throw new Error(BackupFlowText.noBackup);
    },
    async () => privateKey,
  ];
  fake.impl.privateKeyFromBackup = async () => (answers.shift() as () => Promise<string>)();
  const v = await page();
  await click(v.$$("button").find((b) => b.textContent === T.generate) ?? null);
  await settle(10);
  expect(v.text()).toContain(T.needBackupSecret);
  const input = v.$<HTMLInputElement>('input[name="backupSecret"]');
  if (!input) throw new Error("no secret field");
  expect(input.closest("label")?.textContent).toContain(T.backupSecret);
  const open = () => v.$$<HTMLButtonElement>("button").find((b) => b.textContent === T.openBackup) ?? null;
  expect(open()?.disabled).toBe(true);
  await typeInto(input, "the wrong passphrase");
  const form = () => v.$<HTMLFormElement>("form.key-image-backup") as HTMLFormElement;
  const result = () => v.$('[data-testid="key-image-result"]')?.textContent;
  await submit(form());
  await settle(10);
  expect(result()).toBe(T.wrongSecret);
  await submit(form());
  await settle(10);
  expect(result()).toBe(T.tooManyAttempts(8));
  await submit(form());
  await settle(10);
  expect(result()).toBe(T.noBackup);
  await submit(form());
  await settle(20);
  expect(callsOf(fake, "privateKeyFromBackup").map((c) => c.args[0])).toEqual(
    Array(4).fill("the wrong passphrase"),
  );
  // The key is open: the form goes; the picture is drawn (in a browser; happy-dom has no canvas).
  expect(v.$('input[name="backupSecret"]')).toBeNull();
  expect<(string | undefined)[]>([T.generateFailed, undefined]).toContain(result());
});

test("Read without an exportable key checks the picture's key against the account's public key", async () => {
  const mine = await generateIdentity();
  const other = await generateIdentity();
  if (engineState.auth.user) engineState.auth.user.publicKey = mine.publicKey;
  expect(await checkPicture(mine.privateKey)).toEqual({ ok: true, text: T.match });
  expect(await checkPicture(other.privateKey)).toEqual({ ok: false, text: T.mismatch });
  expect(await checkPicture("A".repeat(60))).toEqual({ ok: false, text: T.readFailed });
  // With an exportable key, that key decides.
  fake.impl.exportPrivateKey = async () => other.privateKey;
  expect(await checkPicture(other.privateKey)).toEqual({ ok: true, text: T.match });
});

test("a picture that cannot be read gives the spec's Georgian read failure", async () => {
  expect(T.readFailed).toBe(IMAGE_READ_FAILED);
  const v = await page();
  await click(tab(v, T.readTab));
  const input = v.$<HTMLInputElement>('input[name="keyImage"]');
  if (!input) throw new Error("no file input");
  const file = new File([new Uint8Array([1, 2, 3])], "junk.png", { type: "image/png" });
  Object.defineProperty(input, "files", { configurable: true, value: [file] });
  input.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
  await settle(20);
  expect(v.$('[data-testid="key-image-result"]')?.textContent).toBe(T.readFailed);
});
