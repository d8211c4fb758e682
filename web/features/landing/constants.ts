/**
 * The landing page's texts and constants (spec §2.2, §4.7, §9), in one place. Values marked
 * "cosmetic" are this implementation's choices where the spec leaves timings open.
 */

/** Element id of the landing island's root. */
export const LANDING_ISLAND_ID = "island-landing";

export const LANDING_TEXT = {
  brand: "wsync",
  /** The logo bar's scrambled subtitle (cosmetic). */
  brandSubtitle: "ENCRYPTED CHANNELS // ZERO KNOWLEDGE RELAY",
  enter: "ENTER",
  tapToEnter: "TAP TO ENTER",
  messagingTitle: "SYNC",
  messagingSubtitle: "Secure Communications",
  messagingHref: "/sync",
  communityTitle: "COMMUNITY",
  communitySubtitle: "Where thoughts cast shadows",
  communityHref: "/community",
  poweredBy: "POWERED BY",
  /** Cycle-mode control's accessible name (the canvas, once entered). */
  cycleLabel: "Landing animation: press Enter or Space to change the colour mode",
} as const;

export const LANDING = {
  /** Colour modes 0..3, then wrap. Mode 0 is black and white. */
  modes: 4,
  /** Entry transition: progress +0.02 every 16 ms (about 50 frames). */
  entryStep: 0.02,
  /** Colour-mode transform: progress 0 → 1, +0.04 every 16 ms. */
  colorStep: 0.04,
  tickMs: 16,
  /** A click into mode 0 glitches the picture for 800 ms. */
  glitchPulseMs: 800,
  /** Brand glitch while idle: first roll after 4 s, then every 8 s, each with a 40% chance. */
  brandGlitchFirstMs: 4_000,
  brandGlitchEveryMs: 8_000,
  brandGlitchChance: 0.4,
  /** Brand glitch while active: re-rolled every 6 s. */
  brandGlitchRerollMs: 6_000,
  /** How long one brand glitch burst lasts (cosmetic). */
  brandGlitchBurstMs: 450,
  /** Mobile layout below this window width. */
  mobileBreakpointPx: 768,
  /** Text scramble (cosmetic): letter delay for hover titles, frame period, and for subtitles. */
  scrambleLetterMs: 80,
  scrambleSubtitleLetterMs: 28,
  scrambleFrameMs: 40,
  scrambleChars: "!<>-_\\/[]{}=+*^?#01ABCDEFXYZ$%&",
  /** The canvas renders at this fraction of its CSS size, upscaled pixelated (the terminal look). */
  renderScale: 0.5,
  /** One glyph cell of the digital rain, in render pixels (a 5×7 glyph plus margins). */
  cellPx: 9,
  /**
   * A device that cannot keep up (frames arriving more than `slowFrameMs` apart on average) draws
   * less often, down to one frame every `maxFrameGapMs`: the picture stays the same, the CPU it takes
   * (software WebGL on a weak or busy machine) drops. Cosmetic.
   */
  slowFrameMs: 40,
  maxFrameGapMs: 100,
} as const;

/** Where the provider's name comes from: the handle suffix's host; localhost instances show this. */
export const PROVIDER_FALLBACK = "wsync";

/** The provider's name for the footer, from the server's handle suffix (".example.org" → "example.org"). */
export function providerName(handleSuffix: string): string {
  const host = handleSuffix.replace(/^\./, "");
  return host && host !== "test" ? host : PROVIDER_FALLBACK;
}

/** The number of ticks a transition of `step` takes (0.02 → 50, 0.04 → 25). */
export const ticksFor = (step: number) => Math.round(1 / step);
