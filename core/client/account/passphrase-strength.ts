import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import * as common from "@zxcvbn-ts/language-common";
import * as en from "@zxcvbn-ts/language-en";
import { KeyBackupError, PASSPHRASE_MIN_LENGTH } from "../../crypto/key-backup.ts";
import {
  durationWords,
  GPU_GUESSES_PER_SECOND,
  MIN_GUESSES_LOG10,
  PassphraseStrengthText,
} from "./passphrase-policy.ts";

export * from "./passphrase-policy.ts";

/**
 * How long a key-backup passphrase would hold against an offline guesser (docs/key-backup.md,
 * docs/decisions/backup-passphrase-strength.md). The server keeps the sealed blob, so whoever runs it
 * (or steals its database and the login password) can guess without any rate limit; only Argon2id's
 * cost per guess and the passphrase's guessability stand in the way. zxcvbn-ts estimates the number
 * of guesses a smart attacker (dictionaries, names, keyboard walks, dates, l33t, repeats) needs.
 *
 * This module holds the zxcvbn-ts dictionaries (about 2 MB of JavaScript): load it with a dynamic
 * import, only where a backup passphrase is chosen. Pure: no DOM, Node or Bun.
 */

/**
 * Famous example passphrases (comics, tutorials, typing drills): an attacker tries them first, but
 * they are not in zxcvbn-ts's word lists as whole phrases.
 */
const FAMOUS = [
  "correct horse battery staple",
  "correcthorsebatterystaple",
  "tr0ub4dor&3",
  "the quick brown fox jumps over the lazy dog",
  "the quick brown fox",
  "lorem ipsum dolor sit amet",
  "to be or not to be that is the question",
  "may the force be with you",
];

export interface PassphraseStrength {
  /** Whether the passphrase may seal a key backup (long enough, and at least 10^MIN_GUESSES_LOG10 guesses). */
  ok: boolean;
  /** zxcvbn's score, 0 (too guessable) to 4 (very unguessable). */
  score: 0 | 1 | 2 | 3 | 4;
  /** log10 of the estimated number of guesses. */
  guessesLog10: number;
  /** Estimated seconds for one GPU to find it offline at GPU_GUESSES_PER_SECOND. */
  crackSeconds: number;
  /** The same, in words: "3 hours", "about 40,000 years". */
  crackTime: string;
  /** One line for the person typing: the verdict with the estimate and, when refused, what to change. */
  feedback: string;
  /** What to change (zxcvbn's warning and suggestions, or ours); empty when ok. */
  advice: string;
  /** The refusal's message, with the rule; null when ok. */
  refusal: string | null;
}

/** What the passphrase must not lean on: the account's own names (and the login password, when known). */
export interface StrengthInputs {
  handle?: string | null;
  email?: string | null;
  loginPassword?: string | null;
}

let factory: ZxcvbnFactory | null = null;
/** Built on first use (about 0.2 s: it ranks the word lists). */
function zxcvbn(): ZxcvbnFactory {
  factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary, famous: FAMOUS },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  });
  return factory;
}

/** The user inputs zxcvbn weighs as the first words an attacker tries: the names and their parts. */
function userWords(inputs: StrengthInputs): string[] {
  const words = new Set<string>(["wsync"]);
  for (const value of [inputs.handle, inputs.email, inputs.loginPassword]) {
    if (!value) continue;
    const v = value.normalize("NFKC").toLowerCase();
    words.add(v);
    for (const part of v.split(/[^\p{L}\p{N}]+/u)) if (part.length >= 3) words.add(part);
  }
  return [...words];
}

/**
 * The strength of a recovery passphrase (NFKC-normalised, as the KDF sees it) for a key backup:
 * refused when shorter than PASSPHRASE_MIN_LENGTH or estimated under 10^MIN_GUESSES_LOG10 guesses.
 */
export function passphraseStrength(passphrase: string, inputs: StrengthInputs = {}): PassphraseStrength {
  const p = passphrase.normalize("NFKC");
  const long = [...p.trim()].length >= PASSPHRASE_MIN_LENGTH;
  const r = zxcvbn().check(p, userWords(inputs));
  const guessesLog10 = r.guessesLog10;
  const crackSeconds = 10 ** guessesLog10 / GPU_GUESSES_PER_SECOND;
  const crackTime = durationWords(crackSeconds);
  const ok = long && guessesLog10 >= MIN_GUESSES_LOG10;
  const T = PassphraseStrengthText;
  if (ok)
    return {
      ok,
      score: r.score,
      guessesLog10,
      crackSeconds,
      crackTime,
      feedback: T.strong(crackTime),
      advice: "",
      refusal: null,
    };
  const hints = [r.feedback.warning, ...r.feedback.suggestions].filter((s): s is string => Boolean(s));
  const advice = [...hints, hints.length ? T.orCode : T.advice].join(" ");
  const verdict = long ? T.weak(crackTime) : T.tooShort;
  const refusal = `${long ? T.refused(crackTime) : T.refusedShort} ${T.rule} ${advice}`;
  return {
    ok,
    score: r.score,
    guessesLog10,
    crackSeconds,
    crackTime,
    feedback: `${verdict} ${advice}`,
    advice,
    refusal,
  };
}

/** Throws KeyBackupError("weak-secret") with the reason when the passphrase may not seal a backup. */
export function checkPassphraseStrength(passphrase: string, inputs: StrengthInputs = {}): PassphraseStrength {
  const s = passphraseStrength(passphrase, inputs);
  if (s.refusal !== null) throw new KeyBackupError("weak-secret", s.refusal);
  return s;
}
