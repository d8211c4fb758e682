import { afterEach, beforeEach, expect, test } from "bun:test";
import { act } from "react";
import { renderToString } from "react-dom/server";
import { LandingIsland, LandingPage } from "../../../web/features/landing/Landing.tsx";
import { LandingMachine } from "../../../web/features/landing/machine.ts";
import { click, key, type Mounted, mount, settle } from "../harness.ts";
import { FakeClock } from "./fake-clock.ts";

let view: Mounted;
let clock: FakeClock;
let machine: LandingMachine;

beforeEach(() => {
  document.body.innerHTML = "";
  clock = new FakeClock();
  machine = new LandingMachine({ timers: clock });
});
afterEach(async () => {
  await view?.unmount();
});

async function show(reducedMotion?: boolean) {
  view = await mount(
    <LandingIsland
      provider="chat.example.org"
      machine={machine}
      webgl={false}
      reducedMotion={reducedMotion ?? false}
    />,
  );
  // Following a link would make happy-dom navigate; the tests only need the click to reach React.
  view.el.addEventListener("click", (e) => e.preventDefault(), true);
}
const canvas = () => view.$<HTMLCanvasElement>("canvas.landing-canvas");
const data = (name: string) => canvas()?.getAttribute(`data-${name}`);
const advance = (ms: number) => act(async () => clock.advance(ms));

test("server render: the real preview (logo bar, ENTER / TAP TO ENTER, footer), no spinner", () => {
  const html = renderToString(<LandingPage provider="chat.example.org" />);
  expect(html).toContain('id="island-landing"');
  expect(html).toContain('class="landing-logo-bar"');
  expect(html).toContain(">wsync</h1>");
  expect(html).toContain('<span class="enter-desktop">ENTER</span>');
  expect(html).toContain('<span class="enter-mobile">TAP TO ENTER</span>');
  expect(html).toContain('data-state="preview"');
  expect(html).toContain('data-mode="0"');
  expect(html).toContain("POWERED BY");
  expect(html).toContain("CHAT.EXAMPLE.ORG");
  expect(html).not.toContain("spinner");
  expect(html).not.toContain("landing-choice");
});

test("preview → entering → choices, with the state and mode on the canvas", async () => {
  await show();
  expect(data("state")).toBe("preview");
  expect(data("webgl")).toBe("off");
  expect(view.$(".launch")).not.toBeNull();
  expect(view.$(".landing-enter")?.textContent).toBe("ENTERTAP TO ENTER");
  await click(view.$(".landing-enter"));
  expect(data("state")).toBe("entering");
  expect(view.$<HTMLButtonElement>(".landing-enter")?.disabled).toBe(true);
  await advance(16 * 49);
  expect(data("state")).toBe("entering");
  expect(view.$(".landing-choices")).toBeNull();
  await advance(16);
  expect(data("state")).toBe("active");
  expect(view.$(".landing-enter")).toBeNull();
  const links = view.$$<HTMLAnchorElement>("a.landing-choice");
  expect(links.map((a) => a.getAttribute("href"))).toEqual(["/sync", "/community"]);
  expect(links.map((a) => a.querySelector(".visually-hidden")?.textContent)).toEqual([
    "SYNC: Secure Communications",
    "COMMUNITY: Where thoughts cast shadows",
  ]);
  await settle(1_000); // the subtitles' scramble-in settles
  expect(links.map((a) => a.querySelector(".choice-sub")?.textContent)).toEqual([
    "Secure Communications",
    "Where thoughts cast shadows",
  ]);
  expect(links[0]?.classList.contains("landing-choice-left")).toBe(true);
  expect(links[1]?.classList.contains("landing-choice-right")).toBe(true);
});

test("canvas clicks cycle the modes 0→1→2→3→0 with the transform progress; link clicks do not", async () => {
  await show();
  await click(canvas());
  await advance(800);
  for (const mode of ["1", "2", "3", "0"]) {
    await click(canvas());
    expect([data("mode"), data("transform")]).toEqual([mode, "0"]);
    await advance(16 * 10);
    expect(data("transform")).toBe("0.4");
    await advance(16 * 15);
    expect(data("transform")).toBe("1");
  }
  expect(data("glitch")).toBe("on"); // mode 0: 400 ms of the 800 ms pulse have passed
  await advance(400);
  expect(data("glitch")).toBe("off");
  await click(view.$(".landing-choice-left .choice-title"));
  expect(data("mode")).toBe("0");
});

test("the brand title glitches on its schedule (fake clock)", async () => {
  clock.randoms = [0.1];
  await show();
  const brand = () => view.$("h1.landing-brand");
  expect(brand()?.className).toBe("landing-brand");
  await advance(3_999);
  expect(brand()?.className).toBe("landing-brand");
  await advance(1);
  expect(brand()?.className).toBe("landing-brand glitching");
  expect(brand()?.getAttribute("data-text")).toBe("wsync");
  await advance(1_000);
  expect(brand()?.className).toBe("landing-brand");
});

test("keyboard: ENTER is a button, the first choice takes focus, the canvas cycles with Enter/Space", async () => {
  await show();
  expect(canvas()?.tabIndex).toBe(-1);
  await key(canvas(), "Enter"); // inert before entry
  expect(data("state")).toBe("preview");
  const enter = view.$<HTMLButtonElement>("button.landing-enter");
  // A keyboard activation is a click with detail 0.
  await act(async () => {
    enter?.dispatchEvent(new window.MouseEvent("click", { bubbles: true, detail: 0 }) as never);
  });
  await advance(800);
  expect(data("state")).toBe("active");
  expect(document.activeElement?.getAttribute("href")).toBe("/sync");
  expect(canvas()?.tabIndex).toBe(0);
  expect(canvas()?.getAttribute("role")).toBe("button");
  await key(canvas(), "Enter");
  expect(data("mode")).toBe("1");
  await key(canvas(), " ");
  expect(data("mode")).toBe("2");
  await key(canvas(), "a");
  expect(data("mode")).toBe("2");
});

test("reduced motion: one click shows the choices at once; modes change with no transform or glitch", async () => {
  await show(true);
  expect(data("reduced-motion")).toBe("on");
  await click(view.$(".landing-enter"));
  expect(data("state")).toBe("active");
  expect(view.$$("a.landing-choice")).toHaveLength(2);
  expect(view.$(".landing-choice-left .choice-sub")?.textContent).toBe("Secure Communications");
  for (const mode of ["1", "2", "3", "0"]) {
    await click(canvas());
    expect([data("mode"), data("transform"), data("glitch")]).toEqual([mode, "1", "off"]);
  }
  await advance(20_000);
  expect(view.$("h1.landing-brand")?.className).toBe("landing-brand");
});

test("hovering a choice (desktop) scrambles its title, which then settles", async () => {
  await show(false);
  await click(canvas());
  await advance(800);
  const title = () => view.$(".landing-choice-right .choice-title")?.textContent;
  expect(title()).toBe("COMMUNITY");
  await act(async () => {
    view
      .$(".landing-choice-right")
      ?.dispatchEvent(new window.MouseEvent("mouseover", { bubbles: true }) as never);
  });
  await settle(90);
  expect(title()).not.toBe("COMMUNITY");
  expect(title()).toHaveLength("COMMUNITY".length);
  await settle(900);
  expect(title()).toBe("COMMUNITY");
});
