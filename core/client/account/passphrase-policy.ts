import { DEFAULT_KDF, PASSPHRASE_MIN_LENGTH } from "../../crypto/key-backup.ts";

/**
 * The rule a key-backup passphrase must meet, and its texts (docs/key-backup.md,
 * docs/decisions/backup-passphrase-strength.md): small and free of word lists, so forms and the CLI can
 * state it before passphrase-strength.ts (zxcvbn-ts and its dictionaries) has loaded.
 */

/** Backups need an estimated 10^14 guesses or more (and zxcvbn's top score, 4, which is 10^10). */
export const MIN_GUESSES_LOG10 = 14;

/**
 * Our own cost of one guess: one Argon2id derivation at DEFAULT_KDF (64 MiB, 4 passes, 1 lane) on one
 * core of the 2-core reference machine. `npm run bench:kdf -- --runs 7` on 2026-11-26: Bun medians
 * 395 and 409 ms, Chromium 522 ms (docs/key-backup.md has the runs).
 */
export const KDF_MS_PER_GUESS = 400;

/**
 * What one high-end GPU is assumed to manage at DEFAULT_KDF. hashcat's Argon2id (mode 34000) does
 * 1,667 guesses/s on an RTX 4090 at 64 MiB and 3 passes; 4 passes make that ~1,250, and the
 * faster memory of the next generation ~2,200. Rounded up: the attacker is given the benefit.
 */
export const GPU_GUESSES_PER_SECOND = 2_500;

/** A generated recovery code: 120 random bits, i.e. 2^120 ≈ 10^36.1 equally likely codes. */
export const RECOVERY_CODE_GUESSES_LOG10 = 120 * Math.log10(2);

const SECOND = 1;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365.25 * DAY;

const plural = (n: number, unit: string) => `${n.toLocaleString("en-US")} ${unit}${n === 1 ? "" : "s"}`;

/** Seconds in words, rounded down to what matters. */
export function durationWords(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds >= 1e9 * YEAR) return "billions of years";
  if (seconds < 1) return "less than a second";
  if (seconds < MINUTE) return plural(Math.floor(seconds), "second");
  if (seconds < HOUR) return plural(Math.floor(seconds / MINUTE), "minute");
  if (seconds < DAY) return plural(Math.floor(seconds / HOUR), "hour");
  if (seconds < YEAR) return plural(Math.floor(seconds / DAY), "day");
  const years = seconds / YEAR;
  if (years < 1000) return plural(Math.floor(years), "year");
  if (years < 1e6) return `about ${Math.round(years / 1000).toLocaleString("en-US")},000 years`;
  return `about ${Math.round(years / 1e6).toLocaleString("en-US")} million years`;
}

/** The threshold in GPU time, for texts: "about 1,000 years". */
export const MIN_CRACK_TIME = durationWords(10 ** MIN_GUESSES_LOG10 / GPU_GUESSES_PER_SECOND);

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${n} ms`);

export const PassphraseStrengthText = {
  /** The offline cost per guess, as the forms state it. */
  offlineCost: `Whoever holds the sealed backup (the server included) can guess offline, without any limit. Each guess costs Argon2id with ${DEFAULT_KDF.m / 1024} MiB and ${DEFAULT_KDF.t} passes: about ${ms(KDF_MS_PER_GUESS)} on one CPU core, while one high-end GPU makes about ${GPU_GUESSES_PER_SECOND.toLocaleString("en-US")} guesses a second.`,
  rule: `The passphrase must take an estimated 10^${MIN_GUESSES_LOG10} guesses or more (${MIN_CRACK_TIME} for one GPU).`,
  advice: "Add two or three uncommon words, or use a generated recovery code instead.",
  orCode: "Or use a generated recovery code instead.",
  strong: (time: string) => `Strong enough: one GPU would need ${time} to guess it offline.`,
  weak: (time: string) => `Too easy to guess: one GPU would find it offline in ${time}.`,
  tooShort: `Too short: at least ${PASSPHRASE_MIN_LENGTH} characters.`,
  /** The refusal a weak passphrase gets (web form, CLI prompt, engine), followed by the rule and advice. */
  refused: (time: string) =>
    `The recovery passphrase is too easy to guess: one GPU would find it offline in ${time}.`,
  refusedShort: `The recovery passphrase is too short: at least ${PASSPHRASE_MIN_LENGTH} characters.`,
  checking: "Checking strength...",
} as const;
