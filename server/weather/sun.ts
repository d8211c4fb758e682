/**
 * Sunrise and sunset computed locally, so the weather board shows them even when the weather source is
 * unreachable.
 *
 * Algorithm: the NOAA Global Monitoring Laboratory solar calculator (its "General Solar Position
 * Calculations" and the NOAA_Solar_Calculations_day spreadsheet), which implements the low-precision
 * solar coordinates from Jean Meeus, "Astronomical Algorithms" (2nd ed., 1998), chapters 22, 25 and 28.
 * Sunrise/sunset is the moment the sun's centre is 0.833° below the horizon (0.567° of standard
 * atmospheric refraction plus 0.266° of solar semi-diameter). Like NOAA's online calculator we estimate
 * each event from the sun's position at solar noon and then re-evaluate the position at the estimated
 * moment, which brings the result to within a few seconds of the calculator for latitudes below ±72°.
 */

/** The sun's centre at the geometric horizon, corrected for refraction and the solar disc's radius. */
const ZENITH_DEG = 90.833;
const MS_PER_DAY = 86_400_000;
const MS_PER_MINUTE = 60_000;
/** Julian day number of the Unix epoch (1970-01-01T00:00Z). */
const JD_UNIX_EPOCH = 2_440_587.5;
/** Julian day of J2000.0 (2000-01-01T12:00 TT), the origin of Meeus's century count. */
const JD_J2000 = 2_451_545;
/** Refinement passes after the noon estimate; the second one changes results by well under a second. */
const REFINEMENTS = 2;

export interface SunTimes {
  /** ISO-8601 UTC instant rounded to the minute, or null when the sun does not rise or set that day. */
  sunrise: string | null;
  sunset: string | null;
  /** Which polar case made the times null: the sun stays up ("day") or stays down ("night"). */
  polar: "day" | "night" | null;
}

/** A calendar date (month 1-12) as it is at the place, not in UTC. */
export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

const toRad = (deg: number): number => (deg * Math.PI) / 180;
const toDeg = (rad: number): number => (rad * 180) / Math.PI;

interface SolarPosition {
  /** Declination, degrees. */
  declination: number;
  /** Equation of time, minutes (apparent minus mean solar time). */
  equationOfTime: number;
}

/** Declination and equation of time at a Julian day, per the NOAA spreadsheet's columns. */
const solarPosition = (jd: number): SolarPosition => {
  const t = (jd - JD_J2000) / 36_525;
  const meanLongitude = (((280.46646 + t * (36_000.76983 + t * 0.0003032)) % 360) + 360) % 360;
  const meanAnomaly = 357.52911 + t * (35_999.05029 - 0.0001537 * t);
  const eccentricity = 0.016708634 - t * (0.000042037 + 0.0000001267 * t);
  const m = toRad(meanAnomaly);
  const equationOfCentre =
    Math.sin(m) * (1.914602 - t * (0.004817 + 0.000014 * t)) +
    Math.sin(2 * m) * (0.019993 - 0.000101 * t) +
    Math.sin(3 * m) * 0.000289;
  const trueLongitude = meanLongitude + equationOfCentre;
  // Nutation and aberration, reduced to the one dominant term (longitude of the Moon's ascending node).
  const omega = toRad(125.04 - 1934.136 * t);
  const apparentLongitude = trueLongitude - 0.00569 - 0.00478 * Math.sin(omega);
  const meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))) / 60) / 60;
  const obliquity = meanObliquity + 0.00256 * Math.cos(omega);

  const declination = toDeg(Math.asin(Math.sin(toRad(obliquity)) * Math.sin(toRad(apparentLongitude))));

  const y = Math.tan(toRad(obliquity) / 2) ** 2;
  const l0 = toRad(meanLongitude);
  const eot =
    y * Math.sin(2 * l0) -
    2 * eccentricity * Math.sin(m) +
    4 * eccentricity * y * Math.sin(m) * Math.cos(2 * l0) -
    0.5 * y * y * Math.sin(4 * l0) -
    1.25 * eccentricity * eccentricity * Math.sin(2 * m);
  return { declination, equationOfTime: 4 * toDeg(eot) };
};

/**
 * Hour angle of sunrise in degrees, or the polar case when the sun never crosses the horizon: the cosine
 * leaves [-1, 1] above the polar circles.
 */
const sunriseHourAngle = (latitude: number, declination: number): number | "day" | "night" => {
  const phi = toRad(latitude);
  const delta = toRad(declination);
  const cosH =
    Math.cos(toRad(ZENITH_DEG)) / (Math.cos(phi) * Math.cos(delta)) - Math.tan(phi) * Math.tan(delta);
  if (cosH > 1) return "night";
  if (cosH < -1) return "day";
  return toDeg(Math.acos(cosH));
};

/** Minutes after the date's 00:00 UTC of an event; side -1 is sunrise, +1 sunset. */
const eventMinutes = (
  midnightJd: number,
  latitude: number,
  longitude: number,
  side: -1 | 1,
): number | null => {
  // Longitude is east-positive; 4 minutes of time per degree.
  const noonPosition = solarPosition(midnightJd + (720 - 4 * longitude) / 1440);
  const noonAngle = sunriseHourAngle(latitude, noonPosition.declination);
  if (typeof noonAngle !== "number") return null;
  let minutes = 720 - 4 * longitude - noonPosition.equationOfTime + side * 4 * noonAngle;
  for (let i = 0; i < REFINEMENTS; i++) {
    const position = solarPosition(midnightJd + minutes / 1440);
    const angle = sunriseHourAngle(latitude, position.declination);
    // Right at a polar boundary the refined position may not cross the horizon; the noon estimate is
    // then the best answer there is.
    if (typeof angle !== "number") break;
    minutes = 720 - 4 * longitude - position.equationOfTime + side * 4 * angle;
  }
  return minutes;
};

const assertPlace = (latitude: number, longitude: number): void => {
  if (!Number.isFinite(latitude) || latitude < -90 || latitude > 90) {
    throw new RangeError("latitude must be a finite number in [-90, 90]");
  }
  if (!Number.isFinite(longitude) || longitude < -180 || longitude > 180) {
    throw new RangeError("longitude must be a finite number in [-180, 180]");
  }
};

const toIsoMinute = (midnightMs: number, minutes: number): string =>
  new Date(midnightMs + Math.round(minutes) * MS_PER_MINUTE).toISOString();

/**
 * Sunrise and sunset of a calendar date at a place (latitude north-positive, longitude east-positive).
 * The instants are UTC and may fall on the previous or next UTC day (Sydney's sunrise is the evening
 * before in UTC).
 */
export const sunTimesForDate = (date: CalendarDate, latitude: number, longitude: number): SunTimes => {
  assertPlace(latitude, longitude);
  const midnightMs = Date.UTC(date.year, date.month - 1, date.day);
  if (!Number.isFinite(midnightMs)) throw new RangeError("invalid calendar date");
  const midnightJd = midnightMs / MS_PER_DAY + JD_UNIX_EPOCH;

  const rise = eventMinutes(midnightJd, latitude, longitude, -1);
  const set = eventMinutes(midnightJd, latitude, longitude, 1);
  if (rise === null || set === null) {
    const noon = solarPosition(midnightJd + (720 - 4 * longitude) / 1440);
    const angle = sunriseHourAngle(latitude, noon.declination);
    return { sunrise: null, sunset: null, polar: typeof angle === "number" ? null : angle };
  }
  return { sunrise: toIsoMinute(midnightMs, rise), sunset: toIsoMinute(midnightMs, set), polar: null };
};

/**
 * The calendar date at a place for an instant, by local mean solar time (UTC shifted by longitude / 15
 * hours). The server knows coordinates but not the place's civil time zone, and the solar day is the
 * one whose noon the sunrise and sunset straddle.
 */
export const solarDateAt = (instantMs: number, longitude: number): CalendarDate => {
  const local = new Date(instantMs + (longitude / 360) * MS_PER_DAY);
  return { year: local.getUTCFullYear(), month: local.getUTCMonth() + 1, day: local.getUTCDate() };
};

/** Sunrise and sunset of the local solar day that contains an instant (ms since the Unix epoch). */
export const sunTimesAt = (instantMs: number, latitude: number, longitude: number): SunTimes => {
  if (!Number.isFinite(instantMs)) throw new RangeError("instant must be a finite number of milliseconds");
  return sunTimesForDate(solarDateAt(instantMs, longitude), latitude, longitude);
};
