#!/usr/bin/env bun
import { installNativeGcm } from "../core/crypto/gcm.ts";
import { exitWhenFlushed, lifetime, watchOutput } from "./lifetime.ts";
import { openGcm } from "./native-gcm.ts";
import { run } from "./program.ts";

watchOutput();
// Messages open with Bun's own AES-GCM (a long read decrypts thousands: core/crypto/gcm.ts).
installNativeGcm(openGcm);

// No top-level await: the compiled binary is bytecode-compiled, which needs a plain module body.
run(process.argv.slice(2)).then((code) => {
  // `serve` keeps running; everything else (tail and the screen included, once they return) exits.
  if (code !== 0 || !lifetime.keepAlive) void exitWhenFlushed(code);
});
