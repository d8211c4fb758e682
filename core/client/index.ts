export * from "./api.ts";
export * from "./client.ts";
export * from "./keyring.ts";
export * from "./realtime.ts";
export * from "./session.ts";
export * from "./state.ts";
export * from "./store.ts";
export * from "./timeline.ts";
