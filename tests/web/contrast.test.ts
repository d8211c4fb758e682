/**
 * WCAG 2.2 AA text contrast (1.4.3, at least 4.5:1) of the board's colours, read from the stylesheets
 * themselves (web/styles/*.css): the custom properties of `:root`, and every rule that gives text a
 * colour. A text colour with no background of its own sits on the page (--bg) or on a panel (--panel:
 * the sidebar, dialogs, drawers); a rule with both a text colour and a background is checked as that
 * pair (a translucent background over either surface). Issue 28: the dim green of labels, timestamps
 * and headings was 4.27:1 on black and 4.07:1 on the panels.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const STYLES = join(import.meta.dir, "..", "..", "web", "styles");
const AA = 4.5;

interface Rule {
  file: string;
  selector: string;
  decls: Map<string, string>;
}

/** The innermost `selector { declarations }` blocks of a stylesheet (inside @media too). */
function rulesOf(file: string, css: string): Rule[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, "");
  const out: Rule[] = [];
  for (const m of text.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const decls = new Map<string, string>();
    for (const d of (m[2] as string).split(";")) {
      const at = d.indexOf(":");
      if (at > 0) decls.set(d.slice(0, at).trim(), d.slice(at + 1).trim());
    }
    out.push({ file, selector: (m[1] as string).trim().replace(/\s+/g, " "), decls });
  }
  return out;
}

const files = readdirSync(STYLES).filter((f) => f.endsWith(".css"));
const rules = files.flatMap((f) => rulesOf(f, readFileSync(join(STYLES, f), "utf8")));
const vars = new Map<string, string>();
for (const r of rules)
  if (r.selector === ":root") for (const [k, v] of r.decls) if (k.startsWith("--")) vars.set(k, v);

/** A value with its var()s replaced (fallbacks honoured). */
function resolve(value: string, depth = 0): string {
  if (depth > 10) throw new Error(`var() loop in ${value}`);
  const next = value.replace(
    /var\(\s*(--[\w-]+)\s*(?:,\s*([^)]+))?\)/g,
    (_, name: string, fallback?: string) => {
      const v = vars.get(name) ?? fallback;
      if (v === undefined) throw new Error(`undefined custom property ${name}`);
      return v.trim();
    },
  );
  return next === value ? value : resolve(next, depth + 1);
}

type RGBA = [number, number, number, number];

/** #rgb, #rrggbb, rgb()/rgba(); null for anything else (gradients, currentColor, inherit, ...). */
function parseColor(value: string): RGBA | null {
  const v = value.trim().toLowerCase();
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/.exec(v);
  if (hex) {
    const h = hex[1] as string;
    const full = h.length === 3 ? [...h].map((c) => c + c).join("") : h;
    return [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16)).concat(1) as RGBA;
  }
  const fn = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+))?\s*\)$/.exec(v);
  if (fn) return [Number(fn[1]), Number(fn[2]), Number(fn[3]), fn[4] === undefined ? 1 : Number(fn[4])];
  if (v === "black") return [0, 0, 0, 1];
  if (v === "white") return [255, 255, 255, 1];
  return null;
}

/** A translucent colour painted over an opaque one. */
const over = (top: RGBA, base: RGBA): RGBA => [
  top[0] * top[3] + base[0] * (1 - top[3]),
  top[1] * top[3] + base[1] * (1 - top[3]),
  top[2] * top[3] + base[2] * (1 - top[3]),
  1,
];

/** WCAG relative luminance and contrast ratio. */
function luminance([r, g, b]: RGBA): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}
function contrast(a: RGBA, b: RGBA): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const surface = (name: string): RGBA => {
  const c = parseColor(resolve(`var(${name})`));
  if (c?.[3] !== 1) throw new Error(`${name} is not an opaque colour`);
  return c;
};
const SURFACES = { "--bg": surface("--bg"), "--panel": surface("--panel") };

/** Every (text, background) pair the stylesheets draw, with where it comes from. */
function pairs(): { where: string; fg: string; bg: string; ratio: number }[] {
  const out: { where: string; fg: string; bg: string; ratio: number }[] = [];
  for (const r of rules) {
    const colorDecl = r.decls.get("color");
    if (!colorDecl) continue;
    const fgText = resolve(colorDecl);
    const fg = parseColor(fgText);
    if (!fg) continue; // inherit, currentColor: checked where the colour is set
    const bgDecl = r.decls.get("background") ?? r.decls.get("background-color");
    const own = bgDecl ? parseColor(resolve(bgDecl)) : null;
    for (const [name, base] of Object.entries(SURFACES)) {
      const bg = own ? over(own, base) : base;
      // Text with a translucent colour is blended too (none today, but the rule would hold).
      const text = fg[3] === 1 ? fg : over(fg, bg);
      out.push({
        where: `${r.file} ${r.selector}`,
        fg: `${colorDecl} (${fgText})`,
        bg: own ? `${bgDecl} over ${name}` : name,
        ratio: contrast(text, bg),
      });
    }
  }
  return out;
}

describe("text contrast (WCAG AA 4.5:1) from the stylesheets' own colours", () => {
  test("the parser reads the palette and the rules (a test of the test)", () => {
    expect(files).toContain("base.css");
    for (const name of ["--bg", "--panel", "--dim", "--green", "--fg"]) expect(vars.has(name)).toBe(true);
    // The known pairs of the board are among those checked.
    const all = pairs();
    expect(all.some((p) => p.where.includes(".msg time") && p.fg.startsWith("var(--dim)"))).toBe(true);
    expect(all.some((p) => p.where.includes(".members h4") && p.bg === "--panel")).toBe(true);
    expect(all.some((p) => p.where.includes(".sb-unread") && p.bg.startsWith("var(--green-dim)"))).toBe(true);
    expect(all.length).toBeGreaterThan(100);
    // And the formula: black on white is 21:1, a colour on itself 1:1.
    expect(contrast([0, 0, 0, 1], [255, 255, 255, 1])).toBeCloseTo(21, 5);
    expect(contrast([74, 122, 102, 1], [74, 122, 102, 1])).toBe(1);
  });

  test("the dim text colour (labels, timestamps, headings) reaches 4.5:1 on the page and on panels", () => {
    const dim = parseColor(resolve("var(--dim)")) as RGBA;
    for (const [name, bg] of Object.entries(SURFACES)) {
      const ratio = contrast(dim, bg);
      expect({ on: name, ok: ratio >= AA, ratio: Number(ratio.toFixed(2)) }).toMatchObject({ ok: true });
    }
  });

  test("the dim green of borders (inputs, panels) keeps 3:1 on the page and on panels (WCAG 1.4.11)", () => {
    const border = parseColor(resolve("var(--green-dim)")) as RGBA;
    for (const bg of Object.values(SURFACES)) expect(contrast(border, bg)).toBeGreaterThanOrEqual(3);
  });

  test("every text colour in every rule reaches 4.5:1 on what it is drawn on", () => {
    const failing = pairs()
      .filter((p) => p.ratio < AA)
      .map((p) => `${p.where}: ${p.fg} on ${p.bg} = ${p.ratio.toFixed(2)}:1`);
    expect(failing).toEqual([]);
  });
});
