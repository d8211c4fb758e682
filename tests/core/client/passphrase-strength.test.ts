/**
 * The key-backup passphrase's strength rule (core/client/account/passphrase-strength.ts): dictionary,
 * pattern, famous and name-based passphrases are refused with a reason; long random ones and
 * generated recovery codes clear the 10^14-guess bar; the texts state the offline cost per guess.
 */
import { describe, expect, test } from "bun:test";
import {
  checkPassphraseStrength,
  durationWords,
  GPU_GUESSES_PER_SECOND,
  KDF_MS_PER_GUESS,
  MIN_CRACK_TIME,
  MIN_GUESSES_LOG10,
  PassphraseStrengthText,
  passphraseStrength,
  RECOVERY_CODE_GUESSES_LOG10,
} from "../../../core/client/account/passphrase-strength.ts";
import { KeyBackupError, newRecoveryCode, PASSPHRASE_MIN_LENGTH } from "../../../core/crypto/key-backup.ts";

const ME = { handle: "margot.wsync.example", email: "margot.lefevre@example.com" };

/** A random passphrase of `n` characters drawn from `alphabet` (crypto-random, so never a word). */
function random(n: number, alphabet: string): string {
  const out: string[] = [];
  for (const b of crypto.getRandomValues(new Uint8Array(n))) out.push(alphabet[b % alphabet.length] ?? "x");
  return out.join("");
}

describe("weak passphrases are refused, with the reason", () => {
  const weak = [
    // Common passwords, padded past the 12-character minimum.
    "password1234",
    "password123456",
    "qwertyuiop123456",
    "iloveyou2024!!",
    "football2020!",
    // Repeats, sequences, keyboard walks.
    "abcdefghijklmnop",
    "aaaaaaaaaaaaaaaa",
    "iloveyouiloveyou",
    "1qaz2wsx3edc4rfv",
    // Predictable substitutions of dictionary words.
    "P@ssw0rd123456",
    "Tr0ub4dor&3",
    // Famous example passphrases, and variants of them.
    "correct horse battery staple",
    "Correct Horse Battery Staple!",
    "correcthorsebatterystaple",
    "the quick brown fox jumps over the lazy dog",
    // Too few common words, a date and names.
    "blue coffee mug",
    "mountain river sky",
    "alice-wonderland-1990",
    "JohnSmith19851985",
  ];
  for (const p of weak) {
    test(JSON.stringify(p), () => {
      const s = passphraseStrength(p, ME);
      expect(s.ok).toBe(false);
      expect(s.guessesLog10).toBeLessThan(MIN_GUESSES_LOG10);
      expect(s.crackSeconds).toBeLessThan(10 ** MIN_GUESSES_LOG10 / GPU_GUESSES_PER_SECOND);
      expect(s.feedback).toMatch(/^(Too easy to guess: one GPU would find it offline in |Too short)/);
      expect(s.feedback).toEndWith(s.advice);
      expect(s.advice).toContain("recovery code");
      expect(s.refusal).toStartWith("The recovery passphrase is too ");
      expect(s.refusal).toContain(PassphraseStrengthText.rule);
    });
  }

  test("one built on the account's own names is refused (the same without knowing them would pass)", () => {
    const own = "margot lefevre 1990!";
    const s = passphraseStrength(own, ME);
    expect(s.ok).toBe(false);
    // Without the account's names zxcvbn would not know them as the first words to try.
    expect(passphraseStrength(own).ok).toBe(true);
    expect(passphraseStrength("margot.lefevre@example.com", ME).ok).toBe(false);
    expect(passphraseStrength("margot.wsync.example!!", ME).ok).toBe(false);
    // The login password counts as a name too.
    const login = "Sunflower-Kettle-88";
    expect(passphraseStrength(`${login} ${login}`, { ...ME, loginPassword: login }).ok).toBe(false);
  });

  test("shorter than the minimum is refused whatever its estimate", () => {
    const p = random(PASSPHRASE_MIN_LENGTH - 1, "abcdefghijklmnopqrstuvwxyz0123456789!#%&*+=?@^_~");
    const s = passphraseStrength(p);
    expect(s.ok).toBe(false);
    expect(s.feedback.startsWith(PassphraseStrengthText.tooShort)).toBe(true);
  });

  test("checkPassphraseStrength throws a weak-secret KeyBackupError that names the estimate and what to do", () => {
    let err: unknown;
    try {
      checkPassphraseStrength("iloveyou2024!!", ME);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeyBackupError);
    expect((err as KeyBackupError).code).toBe("weak-secret");
    const m = (err as KeyBackupError).message;
    expect(m).toMatch(
      /^The recovery passphrase is too easy to guess: one GPU would find it offline in \d+ hours\. /,
    );
    expect(m).toContain(`10^${MIN_GUESSES_LOG10} guesses`);
    expect(m).toContain("recovery code");
  });
});

describe("strong passphrases are accepted", () => {
  test("long random ones (letters, digits, symbols), 20 samples", () => {
    for (let i = 0; i < 20; i++) {
      const p = random(20, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!#%&*+=?@^_~");
      const s = passphraseStrength(p, ME);
      expect({ p, ok: s.ok }).toEqual({ p, ok: true });
      expect(s.score).toBe(4);
      expect(s.guessesLog10).toBeGreaterThanOrEqual(MIN_GUESSES_LOG10);
      expect(s.feedback).toBe(PassphraseStrengthText.strong(s.crackTime));
      expect(s.refusal).toBeNull();
    }
  });

  test("five or more uncommon words", () => {
    for (const p of [
      "quiet violin harbor pepper glide",
      "lantern orbit meadow staple 42",
      "staple orbit lantern meadow",
      "gravel nectar oyster quantum tundra",
    ]) {
      const s = checkPassphraseStrength(p, ME);
      expect(s.ok).toBe(true);
      expect(s.crackSeconds).toBeGreaterThan(10 ** MIN_GUESSES_LOG10 / GPU_GUESSES_PER_SECOND);
    }
  });

  test("generated recovery codes: 120 random bits, far past the bar (and zxcvbn agrees even as a passphrase)", () => {
    expect(RECOVERY_CODE_GUESSES_LOG10).toBeCloseTo(36.12, 2);
    expect(RECOVERY_CODE_GUESSES_LOG10).toBeGreaterThan(MIN_GUESSES_LOG10 + 20);
    for (let i = 0; i < 5; i++) {
      const code = newRecoveryCode();
      // 24 characters of a 32-letter alphabet: 32^24 = 2^120.
      expect(code.replace(/-/g, "")).toHaveLength(24);
      expect(passphraseStrength(code, ME).ok).toBe(true);
    }
  });

  test("NFKC-normalised first, as the KDF sees it", () => {
    const wide = "ｃｏｒｒｅｃｔ ｈｏｒｓｅ ｂａｔｔｅｒｙ ｓｔａｐｌｅ";
    expect(passphraseStrength(wide).guessesLog10).toBe(
      passphraseStrength("correct horse battery staple").guessesLog10,
    );
  });
});

describe("the texts", () => {
  test("state the offline cost per guess and the bar", () => {
    expect(KDF_MS_PER_GUESS).toBeGreaterThan(100);
    expect(PassphraseStrengthText.offlineCost).toContain("64 MiB and 4 passes");
    expect(PassphraseStrengthText.offlineCost).toContain(`about ${KDF_MS_PER_GUESS} ms on one CPU core`);
    expect(PassphraseStrengthText.offlineCost).toContain("2,500 guesses a second");
    expect(PassphraseStrengthText.rule).toBe(
      "The passphrase must take an estimated 10^14 guesses or more (about 1,000 years for one GPU).",
    );
    expect(MIN_CRACK_TIME).toBe("about 1,000 years");
  });

  test("durations in words", () => {
    expect(durationWords(0.2)).toBe("less than a second");
    expect(durationWords(1)).toBe("1 second");
    expect(durationWords(59)).toBe("59 seconds");
    expect(durationWords(3600 * 5.5)).toBe("5 hours");
    expect(durationWords(86400 * 40)).toBe("40 days");
    expect(durationWords(86400 * 365.25 * 256.4)).toBe("256 years");
    expect(durationWords(86400 * 365.25 * 40_400)).toBe("about 40,000 years");
    expect(durationWords(86400 * 365.25 * 3e8)).toBe("about 300 million years");
    expect(durationWords(1e30)).toBe("billions of years");
  });
});
