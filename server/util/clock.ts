/** Injected time, so token expiry and throttling windows are testable without waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const iso = (ms: number) => new Date(ms).toISOString();
