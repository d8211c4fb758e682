import { LANDING, ticksFor } from "./constants.ts";

/**
 * The landing animation's state machine (spec §4.7), free of React and of the canvas so it can run
 * against a fake clock. preview → (first click) → entering (50 ticks of 16 ms, +0.02) → active; each
 * further click advances the colour mode and runs the transform progress 0 → 1 (+0.04 per 16 ms); a
 * click into mode 0 glitches for 800 ms. The brand title glitches on its own schedule.
 */

export type LandingPhase = "preview" | "entering" | "active";

export interface LandingSnapshot {
  phase: LandingPhase;
  /** Entry progress 0..1. */
  entry: number;
  /** Current colour mode 0..3 and the one the transform comes from. */
  mode: number;
  prevMode: number;
  /** Colour transform progress 0..1 (1 when no transform is running). */
  transform: number;
  /** The 800 ms picture glitch of mode 0. */
  glitch: boolean;
  /** The brand title is glitching; `brandSeed` changes with each roll (picks the variant). */
  brandGlitch: boolean;
  brandSeed: number;
  reducedMotion: boolean;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(id: unknown): void;
  random(): number;
}

export const browserTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (id) => clearInterval(id as ReturnType<typeof setInterval>),
  random: () => Math.random(),
};

export const INITIAL_SNAPSHOT: LandingSnapshot = {
  phase: "preview",
  entry: 0,
  mode: 0,
  prevMode: 0,
  transform: 1,
  glitch: false,
  brandGlitch: false,
  brandSeed: 0,
  reducedMotion: false,
};

/** k steps of `step`, without float drift (50 × 0.02 is exactly 1). */
const progress = (k: number, step: number) => Math.min(1, Math.round(k * step * 1e6) / 1e6);

export class LandingMachine {
  private snap: LandingSnapshot;
  private readonly listeners = new Set<() => void>();
  private readonly timers: Timers;
  private entryTimer: unknown = null;
  private transformTimer: unknown = null;
  private glitchTimer: unknown = null;
  private brandTimer: unknown = null;
  private brandBurst: unknown = null;
  private brandSchedule: "none" | "idle" | "active" = "none";
  private started = false;

  constructor(opts: { timers?: Timers; reducedMotion?: boolean } = {}) {
    this.timers = opts.timers ?? browserTimers;
    this.snap = { ...INITIAL_SNAPSHOT, reducedMotion: opts.reducedMotion ?? false };
  }

  get snapshot(): LandingSnapshot {
    return this.snap;
  }

  readonly getSnapshot = (): LandingSnapshot => this.snap;

  readonly subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  private set(patch: Partial<LandingSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    for (const fn of this.listeners) fn();
  }

  /** Starts the brand glitch schedule (browser only: the server render never starts timers). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.scheduleBrand();
  }

  /** A click or tap on the landing (not on a choice link). */
  click(): void {
    const s = this.snap;
    if (s.phase === "preview") this.enter();
    else if (s.phase === "active") this.cycle();
    // While entering, clicks are ignored: the transition runs to its end.
  }

  private enter(): void {
    if (this.snap.reducedMotion) {
      this.set({ phase: "active", entry: 1 });
      this.scheduleBrand();
      return;
    }
    let k = 0;
    const total = ticksFor(LANDING.entryStep);
    this.set({ phase: "entering", entry: 0 });
    this.entryTimer = this.timers.setInterval(() => {
      k += 1;
      if (k >= total) {
        this.timers.clearInterval(this.entryTimer);
        this.entryTimer = null;
        this.set({ phase: "active", entry: 1 });
        this.scheduleBrand();
      } else {
        this.set({ entry: progress(k, LANDING.entryStep) });
      }
    }, LANDING.tickMs);
  }

  private cycle(): void {
    const prevMode = this.snap.mode;
    const mode = (prevMode + 1) % LANDING.modes;
    if (this.transformTimer !== null) this.timers.clearInterval(this.transformTimer);
    this.transformTimer = null;
    if (this.snap.reducedMotion) {
      this.set({ mode, prevMode, transform: 1 });
      return;
    }
    this.set({ mode, prevMode, transform: 0 });
    let k = 0;
    const total = ticksFor(LANDING.colorStep);
    this.transformTimer = this.timers.setInterval(() => {
      k += 1;
      if (k >= total) {
        this.timers.clearInterval(this.transformTimer);
        this.transformTimer = null;
      }
      this.set({ transform: progress(k, LANDING.colorStep) });
    }, LANDING.tickMs);
    if (mode === 0) {
      if (this.glitchTimer !== null) this.timers.clearTimeout(this.glitchTimer);
      this.set({ glitch: true });
      this.glitchTimer = this.timers.setTimeout(() => {
        this.glitchTimer = null;
        this.set({ glitch: false });
      }, LANDING.glitchPulseMs);
    }
  }

  /** Reduced motion: transitions complete at once, no glitches, no brand schedule. */
  setReducedMotion(reduced: boolean): void {
    if (reduced === this.snap.reducedMotion) return;
    this.set({ reducedMotion: reduced });
    if (reduced) {
      if (this.entryTimer !== null) {
        this.timers.clearInterval(this.entryTimer);
        this.entryTimer = null;
        this.set({ phase: "active", entry: 1 });
      }
      if (this.transformTimer !== null) {
        this.timers.clearInterval(this.transformTimer);
        this.transformTimer = null;
        this.set({ transform: 1 });
      }
      if (this.glitchTimer !== null) this.timers.clearTimeout(this.glitchTimer);
      this.glitchTimer = null;
      this.set({ glitch: false });
    }
    this.scheduleBrand();
  }

  /**
   * The brand title's glitch: idle (preview, entering) first rolls after 4 s, then every 8 s, each
   * roll glitching with a 40% chance; once active it re-rolls every 6 s.
   */
  private scheduleBrand(): void {
    if (!this.started) return;
    const want = this.snap.reducedMotion ? "none" : this.snap.phase === "active" ? "active" : "idle";
    if (want === this.brandSchedule) return;
    this.stopBrand();
    this.brandSchedule = want;
    if (want === "idle") {
      this.brandTimer = this.timers.setTimeout(() => {
        this.rollBrand();
        this.brandTimer = this.timers.setInterval(() => this.rollBrand(), LANDING.brandGlitchEveryMs);
      }, LANDING.brandGlitchFirstMs);
    } else if (want === "active") {
      this.brandTimer = this.timers.setInterval(() => this.rollBrand(), LANDING.brandGlitchRerollMs);
    }
  }

  private stopBrand(): void {
    if (this.brandTimer !== null) {
      // The idle schedule's first wait is a timeout, the rest intervals; clearing both kinds is safe.
      this.timers.clearTimeout(this.brandTimer);
      this.timers.clearInterval(this.brandTimer);
    }
    this.brandTimer = null;
    this.brandSchedule = "none";
    if (this.brandBurst !== null) this.timers.clearTimeout(this.brandBurst);
    this.brandBurst = null;
    if (this.snap.brandGlitch) this.set({ brandGlitch: false });
  }

  private rollBrand(): void {
    if (this.timers.random() >= LANDING.brandGlitchChance) return;
    if (this.brandBurst !== null) this.timers.clearTimeout(this.brandBurst);
    this.set({ brandGlitch: true, brandSeed: this.snap.brandSeed + 1 });
    this.brandBurst = this.timers.setTimeout(() => {
      this.brandBurst = null;
      this.set({ brandGlitch: false });
    }, LANDING.brandGlitchBurstMs);
  }

  dispose(): void {
    for (const t of [this.entryTimer, this.transformTimer]) if (t !== null) this.timers.clearInterval(t);
    if (this.glitchTimer !== null) this.timers.clearTimeout(this.glitchTimer);
    this.entryTimer = this.transformTimer = this.glitchTimer = null;
    this.stopBrand();
    this.started = false;
    this.listeners.clear();
  }
}
