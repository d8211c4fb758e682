import { describe, expect, test } from "bun:test";
import { canon } from "../../../core/crypto/index.ts";
import { signingTextForTests as text } from "../../../core/crypto/message-format.ts";

describe("canon", () => {
  test("sorts keys at every level, keeps array order, no whitespace", () => {
    expect(canon({ b: [2, 1, { d: 1, c: [true, null] }], a: "x" })).toBe(
      '{"a":"x","b":[2,1,{"c":[true,null],"d":1}]}',
    );
  });

  test("does not depend on insertion order", () => {
    expect(canon({ a: 1, b: 2 })).toBe(canon({ b: 2, a: 1 }));
  });

  test("escapes strings exactly as JSON.stringify does, lone surrogates included", () => {
    for (const s of ['"\\/\b\f\n\r\t', "\u0000\u001f\u007f", "\ud800", "a\udc00b", "🌑", "\u2028"]) {
      expect(canon(s)).toBe(JSON.stringify(s));
    }
  });

  test("objects with a null prototype are plain data", () => {
    const o = Object.create(null) as Record<string, number>;
    o.b = 1;
    o.a = 2;
    expect(canon(o)).toBe('{"a":2,"b":1}');
  });

  test.each([
    ["a fraction", 0.5],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["2^53", 2 ** 53],
    ["undefined", undefined],
    ["an undefined property", { a: undefined }],
    ["an undefined array item", [1, undefined]],
    ["a sparse array", Object.assign([1], { 2: 3 })],
    ["a function", () => 1],
    ["a symbol", Symbol("s")],
    ["a bigint", 1n],
    ["a Date", new Date(0)],
    ["a Map", new Map()],
    ["a typed array", new Uint8Array(1)],
  ])("refuses %s", (_name, value) => {
    expect(() => canon(value)).toThrow(TypeError);
  });

  test("refuses a cycle but allows the same object twice side by side", () => {
    const shared = { x: 1 };
    expect(canon({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canon(cyclic)).toThrow(TypeError);
  });
});

describe("a message's signing text, written out (message-format.ts)", () => {
  const pick = <T>(xs: readonly T[], i: number) => xs[i % xs.length] as T;
  const strings = [
    "",
    "a",
    'q"uote',
    "back\\slash",
    "line\nbreak",
    "ünï €",
    "\u2028",
    "😀 emoji",
    "\u0000ctl",
  ];
  const ints = [0, 1, 3, 42, 1_700_000_000_000, Number.MAX_SAFE_INTEGER];

  test("is canon's text for every well-typed shape (with and without epochNumber and chain)", () => {
    let checked = 0;
    for (let i = 0; i < 400; i++) {
      const o: Record<string, unknown> = {
        v: pick([1, 2, 3], i),
        channelId: pick(strings, i),
        epochId: pick(strings, i + 1),
        iv: pick(strings, i + 2),
        encrypted: pick(strings, i * 7),
        senderDid: pick(strings, i + 3),
        clientMsgId: pick(strings, i * 3),
        timestamp: pick(ints, i),
      };
      if (i % 2) o.epochNumber = pick(ints, i + 1);
      if (i % 3 === 0) o.chain = { device: pick(strings, i + 5), n: pick(ints, i + 2) };
      expect(text(o)).toBe(canon(o));
      checked++;
    }
    expect(checked).toBe(400);
  });

  test("leaves to canon whatever is not well typed", () => {
    const base = {
      v: 3,
      channelId: "c",
      epochId: "e",
      iv: "i",
      encrypted: "x",
      senderDid: "d",
      clientMsgId: "m",
      timestamp: 1,
    };
    expect(text({ ...base, timestamp: 1.5 })).toBeNull();
    expect(text({ ...base, timestamp: 2 ** 60 })).toBeNull();
    expect(text({ ...base, iv: 5 })).toBeNull();
    expect(text({ ...base, epochNumber: "1" })).toBeNull();
    expect(text({ ...base, chain: { device: "d", n: 0.5 } })).toBeNull();
    expect(text(base)).toBe(canon(base));
  });
});
