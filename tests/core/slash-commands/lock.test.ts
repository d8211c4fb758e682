import { describe, expect, test } from "bun:test";
import {
  isUnlockedFlag,
  PUZZLE_QUESTION,
  SECRET_PHRASES,
  TERMINAL_UNLOCKED_KEY,
  TERMINAL_UNLOCKED_VALUE,
  tryUnlock,
  UNLOCK_MIN_PARTIAL_LENGTH,
} from "../../../core/slash-commands/index.ts";

describe("constants", () => {
  test("the riddle, word for word", () => {
    expect(PUZZLE_QUESTION).toBe(
      "In a world of surveillance and silence, how do the unheard find their voice?",
    );
  });
  test("eight phrases: the six of spec §9, the product's name and its messaging area's name", () => {
    expect([...SECRET_PHRASES].sort() as string[]).toEqual(
      [
        "decentralized voices",
        "digital shadows",
        "encrypted silence",
        "encrypted whispers",
        "network of trust",
        "shadows speak",
        "sync",
        "wsync",
      ].sort(),
    );
  });
  test("storage key and value", () => {
    expect(TERMINAL_UNLOCKED_KEY).toBe("terminalUnlocked");
    expect(TERMINAL_UNLOCKED_VALUE).toBe("true");
  });
  test("a partial answer needs as many characters as the shortest phrase", () => {
    expect(UNLOCK_MIN_PARTIAL_LENGTH).toBe(4);
  });
});

describe("each phrase unlocks, in any case and with stray whitespace", () => {
  const variants = SECRET_PHRASES.flatMap((p) => [
    p,
    p.toUpperCase(),
    `  ${p}\t`,
    p.replace(/ /g, "   "),
    p.replace(/\b\w/g, (c) => c.toUpperCase()),
  ]);
  test.each(variants)("%p", (input) => {
    expect(tryUnlock(input)).toBe(true);
  });
});

describe("loose match", () => {
  test.each([
    // The answer contains a phrase.
    ["through encrypted whispers", true],
    ["Encrypted whispers.", true],
    ["the shadows speak tonight", true],
    ["asynchronous", true],
    ["/wsync/list", true],
    ["i love wsync", true],
    // The answer is part of a phrase, at least four characters long.
    ["encrypted", true],
    ["whisper", true],
    ["digital shad", true],
    ["trust", true],
    ["ws", false],
    ["wsyn", true],
    ["sync", true],
    ["ync", false],
    ["enc", false],
    ["s", false],
    ["e", false],
    ["of", false],
    ["   of  ", false],
    // Neither.
    ["", false],
    ["   ", false],
    ["\t\n", false],
    ["password", false],
    ["by shouting", false],
    ["encrypted whisper s", false],
    ["shadowsspeak", false],
    ["network  of  trust!", true],
    ["decentralised voices", false],
  ] as const)("tryUnlock(%p) is %p", (input, expected) => {
    expect(tryUnlock(input)).toBe(expected);
  });
});

describe("stored flag", () => {
  test.each([
    ["true", true],
    ["TRUE", false],
    ["1", false],
    ["false", false],
    ["", false],
    [null, false],
    [undefined, false],
  ] as const)("isUnlockedFlag(%p) is %p", (stored, expected) => {
    expect(isUnlockedFlag(stored)).toBe(expected);
  });
});
