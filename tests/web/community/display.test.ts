/** Community display rules (spec §4.8, §9) and the placeholder data, on fixed dates. */
import { describe, expect, test } from "bun:test";
import {
  AGE_RING_DAYS,
  ageRings,
  DAY_MS,
  daysSince,
  relativeTime,
  SYNC_BOX_THRESHOLDS,
  syncBoxes,
} from "../../../web/features/community/display.ts";
import { FOREST_SEEDS, forestNodes } from "../../../web/features/community/forest-data.ts";
import { communityView, DEMO_SPHERE, isCommunityHash } from "../../../web/features/community/routes.ts";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe("age rings (≤ 4 days one, 5–8 two, 9–12 three, > 12 four)", () => {
  test("thresholds are the spec's", () => expect([...AGE_RING_DAYS]).toEqual([4, 8, 12]));
  test.each([
    [0, 1],
    [4, 1],
    [5, 2],
    [8, 2],
    [9, 3],
    [12, 3],
    [13, 4],
    [400, 4],
  ])("%i days → %i rings", (days, rings) => expect(ageRings(days)).toBe(rings));
  test("days since createdAt are whole days, never negative", () => {
    expect(daysSince(ago(4 * DAY_MS + 23 * H), NOW)).toBe(4);
    expect(daysSince(ago(5 * DAY_MS), NOW)).toBe(5);
    expect(daysSince("2026-02-20T12:00:00.000Z", NOW)).toBe(9);
    expect(daysSince(ago(-DAY_MS), NOW)).toBe(0);
  });
});

describe("sync boxes (filled at ≥ 3, 9, 27, 81)", () => {
  test("thresholds are the spec's", () => expect([...SYNC_BOX_THRESHOLDS]).toEqual([3, 9, 27, 81]));
  test.each([
    [0, 0],
    [2, 0],
    [3, 1],
    [8, 1],
    [9, 2],
    [26, 2],
    [27, 3],
    [80, 3],
    [81, 4],
    [5000, 4],
  ])("%i syncs → %i boxes", (count, boxes) => expect(syncBoxes(count)).toBe(boxes));
});

describe("relative time: s, m, h, d, mo (30 d), y", () => {
  test.each([
    [0, "0s"],
    [59 * S, "59s"],
    [60 * S, "1m"],
    [59 * M + 59 * S, "59m"],
    [H, "1h"],
    [23 * H + 59 * M, "23h"],
    [DAY_MS, "1d"],
    [29 * DAY_MS, "29d"],
    [30 * DAY_MS, "1mo"],
    [59 * DAY_MS, "1mo"],
    [60 * DAY_MS, "2mo"],
    [364 * DAY_MS, "12mo"],
    [365 * DAY_MS, "1y"],
    [3 * 365 * DAY_MS, "3y"],
  ])("%i ms ago → %s", (ms, text) => expect(relativeTime(ago(ms), NOW)).toBe(text));
  test("a future date reads as 0s", () => expect(relativeTime(ago(-5 * M), NOW)).toBe("0s"));
  test("fixed ISO dates", () => {
    expect(relativeTime("2026-03-01T09:00:00.000Z", NOW)).toBe("3h");
    expect(relativeTime("2025-01-01T00:00:00.000Z", NOW)).toBe("1y");
  });
});

describe("placeholder forest", () => {
  test("six nodes, dates relative to the clock, a spread of rings and boxes", () => {
    const nodes = forestNodes(NOW, () => 0.5);
    expect(nodes).toHaveLength(6);
    expect(nodes.map((n) => ageRings(daysSince(n.createdAt, NOW)))).toEqual([1, 1, 2, 3, 4, 4]);
    expect(nodes.map((n) => syncBoxes(n.syncCount))).toEqual([0, 1, 2, 3, 4, 2]);
    expect(nodes.map((n) => relativeTime(n.createdAt, NOW))).toEqual(["3h", "4d", "6d", "11d", "1mo", "1y"]);
    expect(nodes[0]?.createdAt).toBe("2026-03-01T09:00:00.000Z");
    for (const n of nodes) {
      expect(n.title.length).toBeGreaterThan(0);
      expect(n.code).toMatch(/^ND-0x/);
      expect(n.discuss.length).toBeGreaterThan(0);
      expect(isCommunityHash(n.nodeHash)).toBe(true);
    }
  });
  test("random counts stay in each node's band, so the box count never changes", () => {
    for (const r of [0, 0.2, 0.5, 0.9999]) {
      expect(forestNodes(NOW, () => r).map((n) => syncBoxes(n.syncCount))).toEqual([0, 1, 2, 3, 4, 2]);
    }
    expect(FOREST_SEEDS.map((s) => s.syncs[0])).toEqual([0, 3, 9, 27, 81, 9]);
  });
});

describe("community paths", () => {
  test("home, forest and node view", () => {
    expect(communityView("/community")).toEqual({ view: "home" });
    expect(communityView("/community/anything/else")).toEqual({ view: "home" });
    expect(communityView(`/${DEMO_SPHERE}`)).toEqual({ view: "forest", sphereHash: DEMO_SPHERE });
    expect(communityView(`/${DEMO_SPHERE}/aaaacanopy2ndone`)).toEqual({
      view: "node",
      sphereHash: DEMO_SPHERE,
      nodeHash: "aaaacanopy2ndone",
    });
  });
  test.each([
    "/",
    "/communityx",
    "/abc",
    "/login",
    "/sync",
    "/api",
    "/assets",
    "/ABCDEFGHIJKLMNOP",
    "/abcdefghijklmno1",
    "/abcdefghijklmnopq",
    `/${DEMO_SPHERE}/short`,
    `/${DEMO_SPHERE}/aaaacanopy2ndone/more`,
  ])("%s is not a community page", (path) => expect(communityView(path)).toBeNull());
});
