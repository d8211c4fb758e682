/**
 * WMO weather interpretation codes (WMO 306, code table 4677) as Open-Meteo reports them in
 * `weather_code`, with the short English wording the board shows. Only the codes Open-Meteo documents
 * are listed; anything else is unknown rather than guessed.
 */
const descriptions: ReadonlyMap<number, string> = new Map([
  [0, "clear sky"],
  [1, "mainly clear"],
  [2, "partly cloudy"],
  [3, "overcast"],
  [45, "fog"],
  [48, "rime fog"],
  [51, "light drizzle"],
  [53, "drizzle"],
  [55, "dense drizzle"],
  [56, "light freezing drizzle"],
  [57, "freezing drizzle"],
  [61, "light rain"],
  [63, "rain"],
  [65, "heavy rain"],
  [66, "light freezing rain"],
  [67, "freezing rain"],
  [71, "light snow"],
  [73, "snow"],
  [75, "heavy snow"],
  [77, "snow grains"],
  [80, "light showers"],
  [81, "showers"],
  [82, "violent showers"],
  [85, "snow showers"],
  [86, "heavy snow showers"],
  [95, "thunderstorm"],
  [96, "thunderstorm with hail"],
  [99, "thunderstorm with heavy hail"],
]);

/** Short description of a WMO code, or null for anything that is not a documented integer code. */
export const describeWeatherCode = (code: unknown): string | null =>
  typeof code === "number" && Number.isInteger(code) ? (descriptions.get(code) ?? null) : null;
