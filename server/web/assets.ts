import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";

/** One built browser file, kept in memory with its gzip form. */
export interface Asset {
  body: Uint8Array;
  gzip: Uint8Array;
  type: string;
}

/** The page entry scripts (web/entries/<name>.tsx). */
export const ENTRIES = ["login", "register", "sync", "community", "landing"] as const;
export type EntryName = (typeof ENTRIES)[number];

export interface WebAssets {
  /** URL path → asset, e.g. "/assets/login-3f9a.js". */
  files: Map<string, Asset>;
  /** URL path of each page's entry script. */
  entries: Record<EntryName, string>;
  /** URL path of the stylesheet. */
  css: string;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  png: "image/png",
  svg: "image/svg+xml",
  woff2: "font/woff2",
};

/**
 * The gzip form of an asset, made once per build with libdeflate (built into Bun) at its strongest
 * level, 12: a standard gzip stream that any browser reads, about 3% smaller than zlib's level 9 on
 * the page scripts (4 KB of /sync's first scripts, issue 28), at a few milliseconds per script.
 * Bun's typings stop at zlib's 9; libdeflate takes 0 to 12.
 */
export function gzipAsset(body: Uint8Array): Uint8Array {
  return Bun.gzipSync(body as Uint8Array<ArrayBuffer>, {
    library: "libdeflate",
    level: 12 as 9,
  });
}

function asset(name: string, body: Uint8Array): Asset {
  const ext = name.slice(name.lastIndexOf(".") + 1);
  return { body, gzip: gzipAsset(body), type: TYPES[ext] ?? "application/octet-stream" };
}

const root = join(import.meta.dir, "..", "..");

/** True inside the single binary, whose files live in Bun's embedded file system. */
export const inBinary = import.meta.dir.startsWith("/$bunfs") || import.meta.dir.includes("~BUN");

/**
 * TanStack's store (under the router) imports `use-sync-external-store/shim/with-selector`, the shim
 * for React before 18, which carries its own copy of useSyncExternalStore into /sync's first script.
 * The same package's plain `with-selector` uses React's own (React 19 here): same behaviour, less
 * JavaScript before first interaction (issue 28).
 */
const noExternalStoreShim: BunPlugin = {
  name: "use-sync-external-store-without-shim",
  setup(build) {
    build.onResolve({ filter: /^use-sync-external-store\/shim\/with-selector(\.js)?$/ }, () => ({
      path: join(root, "node_modules", "use-sync-external-store", "with-selector.js"),
    }));
  },
};

/**
 * Builds the browser bundles from web/ in memory: code-split per route, minified, content-hashed
 * names. Used by `npm start` and the tests; `npm run build` writes the same output to dist/web for
 * the single binary.
 */
export async function buildWebAssets(opts: { outdir?: string } = {}): Promise<WebAssets> {
  // WSYNC_WEB_MINIFY=0: production React, unminified (readable names in a CPU profile of the page).
  const minify = process.env.WSYNC_WEB_DEV !== "1" && process.env.WSYNC_WEB_MINIFY !== "0";
  const nodeEnv = process.env.WSYNC_WEB_DEV === "1" ? '"development"' : '"production"';
  // The search worker (issue 32) is its own bundle: Bun.build does not follow `new Worker(new URL())`.
  // Its hashed URL is compiled into the page code that starts it.
  const worker = await Bun.build({
    entrypoints: [join(root, "web", "features", "search", "search.worker.ts")],
    target: "browser",
    // A module worker: FlexSearch's module build names import.meta (in code the index never runs).
    format: "esm",
    minify,
    sourcemap: "none",
    naming: { entry: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": nodeEnv },
    ...(opts.outdir ? { outdir: opts.outdir } : {}),
  });
  if (!worker.success) throw new AggregateError(worker.logs, "search worker build failed");
  const workerOut = worker.outputs[0];
  if (!workerOut) throw new Error("search worker build made no file");
  const workerName = workerOut.path.slice(workerOut.path.lastIndexOf("/") + 1);
  const result = await Bun.build({
    entrypoints: [
      ...ENTRIES.map((e) => join(root, "web", "entries", `${e}.tsx`)),
      join(root, "web", "styles.css"),
    ],
    target: "browser",
    format: "esm",
    splitting: true,
    // WSYNC_WEB_DEV=1 builds readable React development bundles (full hydration messages).
    minify,
    sourcemap: "none",
    naming: { entry: "[name]-[hash].[ext]", chunk: "chunk-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    plugins: [noExternalStoreShim],
    define: {
      "process.env.NODE_ENV": nodeEnv,
      "process.env.WSYNC_SEARCH_WORKER": JSON.stringify(`/assets/${workerName}`),
    },
    ...(opts.outdir ? { outdir: opts.outdir } : {}),
  });
  if (!result.success) throw new AggregateError(result.logs, "web build failed");
  const files = new Map<string, Asset>();
  files.set(`/assets/${workerName}`, asset(workerName, new Uint8Array(await workerOut.arrayBuffer())));
  const entries: Partial<Record<EntryName, string>> = {};
  let css = "";
  for (const out of result.outputs) {
    const name = out.path.slice(out.path.lastIndexOf("/") + 1);
    const url = `/assets/${name}`;
    files.set(url, asset(name, new Uint8Array(await out.arrayBuffer())));
    const entry = ENTRIES.find((e) => name.startsWith(`${e}-`) && name.endsWith(".js"));
    if (out.kind === "entry-point" && entry) entries[entry] = url;
    if (name.startsWith("styles-") && name.endsWith(".css")) css = url;
  }
  if (ENTRIES.some((e) => !entries[e]) || !css)
    throw new Error("web build is missing an entry script or the stylesheet");
  if (opts.outdir) {
    const manifest = { entries, css, files: [...files.keys()].map((u) => u.slice("/assets/".length)) };
    writeFileSync(join(opts.outdir, "manifest.json"), JSON.stringify(manifest, null, 2));
  }
  return { files, entries: entries as Record<EntryName, string>, css };
}

/** The prebuilt assets embedded in the single binary (dist/web with its manifest). */
function loadPrebuilt(dir: string): WebAssets {
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as {
    entries: Record<EntryName, string>;
    css: string;
    files: string[];
  };
  const files = new Map<string, Asset>();
  for (const name of manifest.files)
    files.set(`/assets/${name}`, asset(name, new Uint8Array(readFileSync(join(dir, name)))));
  return { files, entries: manifest.entries, css: manifest.css };
}

let loading: Promise<WebAssets> | null = null;

/** The assets for this process, built once on first use. */
export function webAssets(): Promise<WebAssets> {
  loading ??= (async () => {
    // `npm run build` embeds dist/web; inside the binary it appears as web/ beside the program.
    if (inBinary) {
      const embedded = [join(import.meta.dir, "web"), join(import.meta.dir, "dist", "web")].find((d) =>
        existsSync(join(d, "manifest.json")),
      );
      if (embedded) return loadPrebuilt(embedded);
      throw new Error("this binary was built without its web assets");
    }
    return buildWebAssets();
  })();
  loading.catch(() => {
    loading = null;
  });
  return loading;
}
