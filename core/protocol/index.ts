export * from "./errors.ts";
export * from "./events.ts";
export * from "./http.ts";
export * from "./ids.ts";
export * from "./limits.ts";
export * from "./models.ts";
export * from "./routes.ts";
export * from "./ws.ts";
