import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../cli/cli-harness.ts";

/**
 * dist/wsync built from the current sources (scripts/build.ts), every time: a binary left from older
 * sources would measure old code. Exits the benchmark when the build fails. Returns its path.
 */
export function freshBinary(): string {
  const binary = join(REPO_ROOT, "dist", "wsync");
  console.log(
    existsSync(binary) ? "building dist/wsync from these sources" : "dist/wsync is missing: building it",
  );
  const build = Bun.spawnSync([process.execPath, "scripts/build.ts"], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (build.exitCode !== 0) process.exit(1);
  return binary;
}
