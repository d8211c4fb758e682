/** Injected time, so token expiry and throttling windows are testable without waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The last time turned into text: a record is made for every message, and busy ones share a millisecond. */
let isoAt = Number.NaN;
let isoText = "";

/** `ms` as an ISO 8601 text (Date's toISOString: a Date that is invalid throws RangeError). */
export function iso(ms: number): string {
  if (ms !== isoAt) {
    isoText = new Date(ms).toISOString();
    isoAt = ms;
  }
  return isoText;
}
