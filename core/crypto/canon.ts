/**
 * Canonical JSON (protocol §5): object keys sorted at every level, no whitespace, integers only.
 * Signatures are made over these bytes, so every implementation must produce the same text for the
 * same value. Anything whose JSON form is not unambiguous is refused rather than coerced:
 * fractions, NaN/Infinity, integers beyond 2^53 (JSON.stringify would switch to exponent form or
 * lose precision), `undefined`, functions, symbols, bigints, and objects that are not plain data
 * (Date, Map, typed arrays), whose JSON form depends on a `toJSON` we do not want to trust.
 * Keys sort by UTF-16 code units (Array#sort's default), as RFC 8785 does.
 */
export function canon(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, open: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isSafeInteger(value)) throw new TypeError(`canon: not a safe integer: ${value}`);
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`canon: unsupported ${typeof value}`);
  }
  const object = value as object;
  if (open.has(object)) throw new TypeError("canon: circular structure");
  open.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let i = 0; i < object.length; i++) {
        if (!(i in object) || object[i] === undefined) throw new TypeError("canon: undefined array item");
        items.push(write(object[i], open));
      }
      return `[${items.join(",")}]`;
    }
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) throw new TypeError("canon: not a plain object");
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const members: string[] = [];
    for (const key of keys) {
      if (record[key] === undefined) throw new TypeError(`canon: undefined value for key ${key}`);
      members.push(`${JSON.stringify(key)}:${write(record[key], open)}`);
    }
    return `{${members.join(",")}}`;
  } finally {
    open.delete(object);
  }
}

/** True when `value` is an object with exactly these own keys. */
export function hasOnlyKeys(value: unknown, keys: readonly string[]): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const own = Object.keys(value);
  return own.length === keys.length && own.every((k) => keys.includes(k));
}
