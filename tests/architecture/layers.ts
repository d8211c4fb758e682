/**
 * The house's layer rules (docs/architecture.md "Rules the suite checks"), as a check over source
 * text: which file may import which, where protocol names may be spelled, and no import cycles.
 * `checkLayers` is pure (a map of path → source in, violations out), so the test can plant violations
 * and see each rule fire, and run it over the real tree.
 */
import { posix } from "node:path";

export interface Violation {
  rule: "core-platform" | "core-dom" | "web-server" | "imports-tests" | "protocol-names" | "cycle";
  file: string;
  detail: string;
}

/** Module specifiers core may not import: it runs in browsers, Bun and scripts alike. */
const PLATFORM =
  /^(bun|bun:.*|node:.*|react|react-dom(\/.*)?|react\/.*|elysia|ink(-.*)?|commander|happy-dom|playwright-core)$/;
/** DOM globals core may not touch (a browser-only API behind the store or vault interfaces instead). */
const DOM = /\b(document|window|localStorage|sessionStorage|navigator)\s*\./;
/** Frame names and API paths are spelled in core/protocol only. */
const FRAME_NAME = /["'`]((?:channel|epoch|device|read):[a-z:]+)["'`]/g;
const API_PATH = /["'`]\/api\/[a-z]/;

const IMPORT = /(?:^|[^\w.])(?:import|export)\s*(?:type\s+)?(?:[\w*{}\s,]+from\s*)?\(?\s*["']([^"']+)["']/g;

function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(IMPORT)) out.push(m[1] as string);
  return out;
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  return posix.normalize(posix.join(posix.dirname(from), spec));
}

/** Strips comments, so a rule quoted in a comment is not a violation. */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

export function checkLayers(files: Map<string, string>, frameNames: readonly string[]): Violation[] {
  const out: Violation[] = [];
  const names = new Set(frameNames);
  const graph = new Map<string, string[]>();
  for (const [file, source] of files) {
    const body = code(source);
    const targets: string[] = [];
    for (const spec of specifiers(body)) {
      const target = resolve(file, spec);
      if (file.startsWith("core/") && target === null && PLATFORM.test(spec))
        out.push({ rule: "core-platform", file, detail: `imports ${spec}` });
      if (target === null) continue;
      targets.push(target);
      if (file.startsWith("web/") && target.startsWith("server/"))
        out.push({ rule: "web-server", file, detail: `imports ${target}` });
      if (!file.startsWith("tests/") && target.startsWith("tests/"))
        out.push({ rule: "imports-tests", file, detail: `imports ${target}` });
    }
    graph.set(file, targets);
    if (file.startsWith("core/") && DOM.test(body))
      out.push({ rule: "core-dom", file, detail: `uses ${DOM.exec(body)?.[1]}` });
    if (!file.startsWith("core/protocol/") && !file.startsWith("tests/")) {
      for (const m of body.matchAll(FRAME_NAME))
        if (names.has(m[1] as string))
          out.push({ rule: "protocol-names", file, detail: `spells the frame "${m[1]}" (use WsEvent)` });
      if (API_PATH.test(body))
        out.push({ rule: "protocol-names", file, detail: "spells an /api/ path (use API_BASE and Routes)" });
    }
  }
  for (const cycle of cycles(graph))
    out.push({ rule: "cycle", file: cycle[0] as string, detail: cycle.join(" → ") });
  return out;
}

/** Every import cycle among the files (Tarjan's strongly connected components of two or more). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) found.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}
