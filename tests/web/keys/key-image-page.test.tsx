/** happy-dom tests of /sync/qr: tabs, Georgian text, no stored key, unreadable pictures. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  RouterProvider,
} from "@tanstack/react-router";
import { IMAGE_READ_FAILED } from "../../../web/features/auth/PrivateKeyValidationModal.tsx";
import { KeyImagePage } from "../../../web/features/keys/KeyImagePage.tsx";
import { KeyImageText as T } from "../../../web/features/keys/text.ts";
import {
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  resetState,
  settle,
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

test("generate with no stored private key says so", async () => {
  const v = await page();
  await click(v.$$("button").find((b) => b.textContent === T.generate) ?? null);
  await settle(10);
  expect(v.$('[data-testid="key-image-result"]')?.textContent).toBe(T.noKey);
  expect(fake.calls.some((c) => c.method === "exportPrivateKey")).toBe(true);
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
