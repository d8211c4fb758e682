/**
 * The protocol's run-time values without its TypeBox schemas: what clients (the browser bundle, the
 * CLI, the engine) import, so they do not ship the schema builder. Types come from index.ts.
 */

export * from "./blob-paths.ts";
export type * from "./direct.ts";
export * from "./direct-meta.ts";
export * from "./errors.ts";
export * from "./events.ts";
// Types only (erased at run time): the shapes clients use, without pulling in TypeBox.
export type * from "./http.ts";
export * from "./ids.ts";
export * from "./limits.ts";
export type * from "./models.ts";
export * from "./routes.ts";
export type * from "./ws.ts";
