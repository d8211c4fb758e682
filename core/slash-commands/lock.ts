/**
 * The terminal's lock (spec §2.8, §4.6, §5). It is a puzzle, not access control: every command
 * still needs the access token, which is what the server checks.
 */

export const PUZZLE_QUESTION = "In a world of surveillance and silence, how do the unheard find their voice?";

/** Lowercase. The last two are the product's name and its messaging area's name (spec §9). */
export const SECRET_PHRASES = [
  "encrypted whispers",
  "shadows speak",
  "decentralized voices",
  "network of trust",
  "encrypted silence",
  "digital shadows",
  "wsync",
  "sync",
] as const;

/** Local-storage key of the unlock flag, and the only value that means unlocked (spec §3). */
export const TERMINAL_UNLOCKED_KEY = "terminalUnlocked";
export const TERMINAL_UNLOCKED_VALUE = "true";

/**
 * The spec's loose match lets an answer "be contained in" a phrase, which taken literally would
 * unlock on a single letter (or on nothing at all, since "" is in every string). A partial answer
 * must therefore be at least as long as the shortest phrase, "sync": "digital shad" unlocks,
 * "sha" does not. An answer that contains a whole phrase unlocks at any length.
 */
export const UNLOCK_MIN_PARTIAL_LENGTH = Math.min(...SECRET_PHRASES.map((p) => p.length));

/** Trimmed, lowercase, inner whitespace runs as one space, so "  Shadows   SPEAK " matches. */
export function normalizeAnswer(input: string): string {
  return input.trim().replace(/\s+/g, " ").toLowerCase();
}

/** True when the answer contains a secret phrase, or is a long enough part of one. */
export function tryUnlock(input: string): boolean {
  const answer = normalizeAnswer(input);
  if (answer === "") return false;
  return SECRET_PHRASES.some(
    (phrase) =>
      answer.includes(phrase) || (answer.length >= UNLOCK_MIN_PARTIAL_LENGTH && phrase.includes(answer)),
  );
}

/** Reads the stored flag: only the exact string "true" unlocks; anything else, or nothing, is locked. */
export function isUnlockedFlag(stored: string | null | undefined): boolean {
  return stored === TERMINAL_UNLOCKED_VALUE;
}
