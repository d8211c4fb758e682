export * from "./index-model.ts";
export * from "./normalize.ts";
export * from "./order-key.ts";
export * from "./query.ts";
