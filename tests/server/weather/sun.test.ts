import { describe, expect, test } from "bun:test";
import { solarDateAt, sunTimesAt, sunTimesForDate } from "../../../server/weather/index.ts";

const TOLERANCE_MS = 2 * 60_000;

const places = {
  tbilisi: [41.7151, 44.8271],
  london: [51.5074, -0.1278],
  newYork: [40.7128, -74.006],
  sydney: [-33.8688, 151.2093],
  tromso: [69.6496, 18.956],
  mcmurdo: [-77.8419, 166.6863],
  quito: [-0.1807, -78.4678],
} as const satisfies Record<string, readonly [number, number]>;

/**
 * Reference times in UTC. London, New York and Sydney are the NOAA solar calculator's published
 * minutes (local civil time converted to UTC). Tbilisi's come from the same algorithm and were
 * cross-checked against an independent implementation (suncalc, after removing its known 0.3° sidereal
 * time offset) and against local almanacs (sunrise about 08:25 and sunset 17:33 at UTC+4 at the
 * winter solstice).
 */
const references: ReadonlyArray<{
  comment: string;
  place: keyof typeof places;
  date: [number, number, number];
  sunrise: string;
  sunset: string;
}> = [
  {
    comment: "London, summer solstice: 04:43 / 21:21 BST",
    place: "london",
    date: [2024, 6, 21],
    sunrise: "2024-06-21T03:43:00Z",
    sunset: "2024-06-21T20:21:00Z",
  },
  {
    comment: "London, winter solstice: 08:04 / 15:53 GMT",
    place: "london",
    date: [2024, 12, 21],
    sunrise: "2024-12-21T08:04:00Z",
    sunset: "2024-12-21T15:53:00Z",
  },
  {
    comment: "New York, summer solstice: 05:25 / 20:31 EDT; sunset is on the next UTC day",
    place: "newYork",
    date: [2024, 6, 21],
    sunrise: "2024-06-21T09:25:00Z",
    sunset: "2024-06-22T00:31:00Z",
  },
  {
    comment: "New York, winter solstice: 07:17 / 16:32 EST",
    place: "newYork",
    date: [2024, 12, 21],
    sunrise: "2024-12-21T12:17:00Z",
    sunset: "2024-12-21T21:32:00Z",
  },
  {
    comment: "Sydney, its summer: 05:41 / 20:05 AEDT; sunrise is on the previous UTC day",
    place: "sydney",
    date: [2024, 12, 21],
    sunrise: "2024-12-20T18:41:00Z",
    sunset: "2024-12-21T09:05:00Z",
  },
  {
    comment: "Sydney, its winter: 07:00 / 16:54 AEST",
    place: "sydney",
    date: [2024, 6, 21],
    sunrise: "2024-06-20T21:00:00Z",
    sunset: "2024-06-21T06:54:00Z",
  },
  {
    comment: "Tbilisi, summer solstice: 05:26 / 20:39 at UTC+4",
    place: "tbilisi",
    date: [2024, 6, 21],
    sunrise: "2024-06-21T01:26:00Z",
    sunset: "2024-06-21T16:39:00Z",
  },
  {
    comment: "Tbilisi, winter solstice: 08:25 / 17:33 at UTC+4",
    place: "tbilisi",
    date: [2024, 12, 21],
    sunrise: "2024-12-21T04:25:00Z",
    sunset: "2024-12-21T13:33:00Z",
  },
  {
    comment: "Tbilisi, late November: 07:58 / 17:35 at UTC+4",
    place: "tbilisi",
    date: [2026, 11, 22],
    sunrise: "2026-11-22T03:58:00Z",
    sunset: "2026-11-22T13:35:00Z",
  },
];

describe("sunTimesForDate", () => {
  for (const ref of references) {
    test(ref.comment, () => {
      const [lat, lon] = places[ref.place];
      const [year, month, day] = ref.date;
      const times = sunTimesForDate({ year, month, day }, lat, lon);
      expect(times.polar).toBeNull();
      expect(times.sunrise).toBeString();
      expect(times.sunset).toBeString();
      expect(Math.abs(Date.parse(times.sunrise ?? "") - Date.parse(ref.sunrise))).toBeLessThanOrEqual(
        TOLERANCE_MS,
      );
      expect(Math.abs(Date.parse(times.sunset ?? "") - Date.parse(ref.sunset))).toBeLessThanOrEqual(
        TOLERANCE_MS,
      );
    });
  }

  test("returns ISO-8601 UTC strings rounded to the minute", () => {
    const times = sunTimesForDate({ year: 2026, month: 11, day: 22 }, ...places.tbilisi);
    for (const value of [times.sunrise, times.sunset]) {
      expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
    }
  });

  test("polar day and polar night give null times and say which", () => {
    const cases = [
      { place: "tromso", date: { year: 2024, month: 6, day: 21 }, polar: "day" },
      { place: "tromso", date: { year: 2024, month: 12, day: 21 }, polar: "night" },
      { place: "mcmurdo", date: { year: 2024, month: 12, day: 21 }, polar: "day" },
      { place: "mcmurdo", date: { year: 2024, month: 6, day: 21 }, polar: "night" },
    ] as const;
    for (const c of cases) {
      const [lat, lon] = places[c.place];
      expect(sunTimesForDate(c.date, lat, lon)).toEqual({ sunrise: null, sunset: null, polar: c.polar });
    }
  });

  test("above the Arctic Circle the sun still rises and sets at the equinox", () => {
    const times = sunTimesForDate({ year: 2024, month: 3, day: 20 }, ...places.tromso);
    expect(times.polar).toBeNull();
    const hours = (Date.parse(times.sunset ?? "") - Date.parse(times.sunrise ?? "")) / 3_600_000;
    expect(hours).toBeGreaterThan(12);
    expect(hours).toBeLessThan(12.6);
  });

  test("near the equator the day is a little over 12 hours all year (refraction and the solar disc)", () => {
    for (const month of [1, 3, 6, 9, 12]) {
      const times = sunTimesForDate({ year: 2025, month, day: 15 }, ...places.quito);
      const minutes = (Date.parse(times.sunset ?? "") - Date.parse(times.sunrise ?? "")) / 60_000;
      expect(minutes).toBeGreaterThan(12 * 60 + 4);
      expect(minutes).toBeLessThan(12 * 60 + 10);
    }
  });

  test("refuses impossible coordinates and dates", () => {
    expect(() => sunTimesForDate({ year: 2024, month: 6, day: 21 }, 91, 0)).toThrow(RangeError);
    expect(() => sunTimesForDate({ year: 2024, month: 6, day: 21 }, 0, -181)).toThrow(RangeError);
    expect(() => sunTimesForDate({ year: 2024, month: 6, day: 21 }, Number.NaN, 0)).toThrow(RangeError);
    expect(() => sunTimesForDate({ year: Number.NaN, month: 6, day: 21 }, 0, 0)).toThrow(RangeError);
  });
});

describe("solarDateAt", () => {
  test("shifts the UTC date by longitude, across the date line both ways", () => {
    expect(solarDateAt(Date.parse("2024-12-31T12:30:00Z"), 179.9)).toEqual({ year: 2025, month: 1, day: 1 });
    expect(solarDateAt(Date.parse("2025-01-01T11:00:00Z"), -179.9)).toEqual({
      year: 2024,
      month: 12,
      day: 31,
    });
    expect(solarDateAt(Date.parse("2025-01-01T11:00:00Z"), 0)).toEqual({ year: 2025, month: 1, day: 1 });
  });
});

describe("sunTimesAt", () => {
  test("Sydney's afternoon gives that day's sunrise, which is the evening before in UTC", () => {
    const times = sunTimesAt(Date.parse("2024-12-21T03:00:00Z"), ...places.sydney);
    expect(times).toEqual(sunTimesForDate({ year: 2024, month: 12, day: 21 }, ...places.sydney));
    expect(times.sunrise?.startsWith("2024-12-20T18:4")).toBe(true);
  });

  test("the day turns over at local mean solar midnight (about 21:00 UTC in Tbilisi)", () => {
    const before = sunTimesAt(Date.parse("2024-12-21T20:50:00Z"), ...places.tbilisi);
    const after = sunTimesAt(Date.parse("2024-12-21T21:10:00Z"), ...places.tbilisi);
    expect(before).toEqual(sunTimesForDate({ year: 2024, month: 12, day: 21 }, ...places.tbilisi));
    expect(after).toEqual(sunTimesForDate({ year: 2024, month: 12, day: 22 }, ...places.tbilisi));
  });

  test("refuses a non-finite instant", () => {
    expect(() => sunTimesAt(Number.NaN, ...places.tbilisi)).toThrow(RangeError);
  });
});
