import { expect, test } from "bun:test";
import { LANDING, LANDING_TEXT, providerName } from "../../../web/features/landing/constants.ts";
import { LandingMachine } from "../../../web/features/landing/machine.ts";
import { FakeClock } from "./fake-clock.ts";

function setup(reducedMotion = false) {
  const clock = new FakeClock();
  const m = new LandingMachine({ timers: clock, reducedMotion });
  return { clock, m };
}

test("the spec's constants and texts", () => {
  expect(LANDING.modes).toBe(4);
  expect([LANDING.entryStep, LANDING.colorStep, LANDING.tickMs, LANDING.glitchPulseMs]).toEqual([
    0.02, 0.04, 16, 800,
  ]);
  expect([LANDING.brandGlitchFirstMs, LANDING.brandGlitchEveryMs, LANDING.brandGlitchChance]).toEqual([
    4000, 8000, 0.4,
  ]);
  expect(LANDING.brandGlitchRerollMs).toBe(6000);
  expect(LANDING.mobileBreakpointPx).toBe(768);
  expect(LANDING_TEXT.messagingSubtitle).toBe("Secure Communications");
  expect(LANDING_TEXT.communitySubtitle).toBe("Where thoughts cast shadows");
  expect([LANDING_TEXT.enter, LANDING_TEXT.tapToEnter]).toEqual(["ENTER", "TAP TO ENTER"]);
  expect([LANDING_TEXT.messagingHref, LANDING_TEXT.communityHref]).toEqual(["/sync", "/community"]);
  expect(providerName(".chat.example.org")).toBe("chat.example.org");
  expect(providerName(".test")).toBe("wsync");
});

test("preview → entering (50 ticks of 16 ms, +0.02) → active; clicks while entering are ignored", () => {
  const { clock, m } = setup();
  expect(m.snapshot.phase).toBe("preview");
  m.click();
  expect(m.snapshot).toMatchObject({ phase: "entering", entry: 0 });
  clock.advance(16);
  expect(m.snapshot.entry).toBe(0.02);
  clock.advance(16 * 24);
  expect(m.snapshot.entry).toBe(0.5);
  m.click(); // ignored: no mode change mid-entry
  expect(m.snapshot.mode).toBe(0);
  clock.advance(16 * 24);
  expect(m.snapshot).toMatchObject({ phase: "entering", entry: 0.98 });
  clock.advance(16);
  expect(m.snapshot).toMatchObject({ phase: "active", entry: 1, mode: 0, transform: 1 });
  expect(clock.now).toBe(800); // 50 frames × 16 ms
});

test("active clicks cycle 0→1→2→3→0 with the transform progress 0 → 1 (+0.04 per 16 ms)", () => {
  const { clock, m } = setup();
  m.click();
  clock.advance(800);
  const seen: number[] = [];
  for (const expected of [1, 2, 3, 0]) {
    m.click();
    expect(m.snapshot).toMatchObject({ mode: expected, prevMode: (expected + 3) % 4, transform: 0 });
    clock.advance(16);
    expect(m.snapshot.transform).toBe(0.04);
    clock.advance(16 * 11);
    expect(m.snapshot.transform).toBe(0.48);
    clock.advance(16 * 13);
    expect(m.snapshot.transform).toBe(1);
    seen.push(m.snapshot.mode);
  }
  expect(seen).toEqual([1, 2, 3, 0]);
});

test("a click into mode 0 glitches for exactly 800 ms; other modes do not", () => {
  const { clock, m } = setup();
  m.click();
  clock.advance(800);
  for (let i = 0; i < 3; i++) {
    m.click();
    expect(m.snapshot.glitch).toBe(false);
  }
  m.click();
  expect(m.snapshot).toMatchObject({ mode: 0, glitch: true });
  clock.advance(799);
  expect(m.snapshot.glitch).toBe(true);
  clock.advance(1);
  expect(m.snapshot.glitch).toBe(false);
});

test("a click mid-transform starts the next mode's transform from 0", () => {
  const { clock, m } = setup();
  m.click();
  clock.advance(800);
  m.click();
  clock.advance(16 * 5);
  expect(m.snapshot.transform).toBe(0.2);
  m.click();
  expect(m.snapshot).toMatchObject({ mode: 2, prevMode: 1, transform: 0 });
  clock.advance(16 * 25);
  expect(m.snapshot.transform).toBe(1);
});

test("brand glitch while idle: first roll at 4 s, then every 8 s, glitching on a 40% chance", () => {
  const { clock, m } = setup();
  m.start();
  clock.randoms = [0.39, 0.4, 0.1];
  clock.advance(3_999);
  expect(clock.rolls).toBe(0);
  clock.advance(1);
  expect(clock.rolls).toBe(1);
  expect(m.snapshot.brandGlitch).toBe(true); // 0.39 < 0.4
  clock.advance(LANDING.brandGlitchBurstMs);
  expect(m.snapshot.brandGlitch).toBe(false);
  clock.advance(8_000 - LANDING.brandGlitchBurstMs - 1);
  expect(clock.rolls).toBe(1);
  clock.advance(1); // 12 s
  expect(clock.rolls).toBe(2);
  expect(m.snapshot.brandGlitch).toBe(false); // 0.4 is not < 0.4
  clock.advance(8_000); // 20 s
  expect(clock.rolls).toBe(3);
  expect(m.snapshot.brandGlitch).toBe(true);
  expect(m.snapshot.brandSeed).toBe(2);
});

test("brand glitch while active: re-rolled every 6 s (the idle schedule stops)", () => {
  const { clock, m } = setup();
  m.start();
  m.click();
  clock.advance(800); // active at 0.8 s; the idle 4 s roll never happens
  clock.randoms = [0.2, 0.9, 0.3];
  clock.advance(3_200 + 2_000); // 6 s after start, 5.2 s after entry
  expect(clock.rolls).toBe(0);
  clock.advance(800); // 6 s after becoming active
  expect(clock.rolls).toBe(1);
  expect(m.snapshot.brandGlitch).toBe(true);
  clock.advance(6_000);
  expect(clock.rolls).toBe(2);
  expect(m.snapshot.brandGlitch).toBe(false);
  clock.advance(6_000);
  expect(clock.rolls).toBe(3);
  expect(m.snapshot.brandGlitch).toBe(true);
});

test("reduced motion: entry and transforms complete at once, no glitch, no brand schedule", () => {
  const { clock, m } = setup(true);
  m.start();
  expect(clock.pending).toBe(0);
  m.click();
  expect(m.snapshot).toMatchObject({ phase: "active", entry: 1 });
  for (const expected of [1, 2, 3, 0]) {
    m.click();
    expect(m.snapshot).toMatchObject({ mode: expected, transform: 1, glitch: false });
  }
  clock.advance(60_000);
  expect(clock.rolls).toBe(0);
});

test("turning reduced motion on mid-entry finishes the entry; dispose clears every timer", () => {
  const { clock, m } = setup();
  m.start();
  m.click();
  clock.advance(160);
  m.setReducedMotion(true);
  expect(m.snapshot).toMatchObject({ phase: "active", entry: 1, reducedMotion: true });
  expect(clock.pending).toBe(0);
  m.setReducedMotion(false);
  expect(clock.pending).toBe(1); // the active brand re-roll
  m.click();
  m.dispose();
  expect(clock.pending).toBe(0);
});
