/**
 * Issue 29 defect 4, the rest: what the command line refuses (exit 2) or now understands, against a
 * real server: a `--since` naming no channel of yours, a key backup under the login password, the
 * password rule the quick start states, and `join #name` as the screen's `/join #name`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Limits } from "../../core/protocol/index.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import {
  Cli,
  type CliUser,
  cleanupTempDirs,
  LineReader,
  PASSWORD,
  REPO_ROOT,
  registerCli,
  uniqueHandle,
} from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await registerCli(t.url, "alice");
  bob = await registerCli(t.url, "bob");
}, 60_000);

afterAll(async () => {
  await t?.stop();
  cleanupTempDirs();
});

test("`listen --since '#nope=3'` (no channel of yours by that name or id) is exit 2, before listening", async () => {
  await alice.cli.ok(["create", "real", "--type", "public"]);
  const r = await alice.cli.run(["listen", "--since", "#nope=3"], { timeoutMs: 20_000 });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe("wsync: --since: you are not in a channel named #nope (nor with that id)\n");
  // Its own channel, by name in any case, is taken: the stream starts (and runs until stopped).
  const proc = alice.cli.spawn(["listen", "--since", "#REAL=0"]);
  try {
    await new LineReader(proc.stderr).waitFor((l) => l.startsWith("Listening to 1 channel"), 20_000);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 60_000);

test("a key backup under the login password is refused (exit 2) and nothing is stored", async () => {
  const r = await alice.cli.run(["keys", "backup", "--passphrase-file", "/dev/stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("login password");
  expect(await alice.cli.ok(["keys", "backup", "--status"])).toContain("There is no key backup");
  // Any other strong passphrase is stored.
  await alice.cli.ok(["keys", "backup", "--passphrase-file", "/dev/stdin"], {
    stdin: "a long enough passphrase for the backup\n",
  });
}, 60_000);

test("the password rule is the server's (and the web app's): the quick start states the same length", async () => {
  const cli = new Cli(t.url);
  const short = "x7#Kp2!qZ".slice(0, Limits.passwordMinLength - 1);
  const handle = uniqueHandle("pw");
  const refused = await cli.run(
    ["register", "--handle", handle, "--email", `${handle}@example.com`, "--password-stdin"],
    {
      stdin: `${short}\n`,
    },
  );
  expect(refused.code).toBe(2);
  expect(refused.stderr).toBe(
    `wsync: Password is not strong enough: use at least ${Limits.passwordMinLength} characters\n`,
  );
  const enough = "Zq8!mVw3#t".slice(0, Limits.passwordMinLength);
  await cli.ok(["register", "--handle", handle, "--email", `${handle}@example.com`, "--password-stdin"], {
    stdin: `${enough}\n`,
  });
  const docs = readFileSync(join(REPO_ROOT, "docs/cli.md"), "utf8");
  expect(docs.includes(`your password, not echoed (${Limits.passwordMinLength}+ characters)`)).toBe(true);
}, 60_000);

test("`join '#name'` finds a channel you can see by name, as the screen's /join does", async () => {
  const id = (await alice.cli.ok(["create", "lobby", "--type", "public"])).trim();
  const r = await bob.cli.run(["join", "#Lobby"]);
  expect(r.stderr).toBe("");
  expect(r.stdout).toBe(`Joined #lobby (${id})\n`);
  expect(r.code).toBe(0);
  const none = await bob.cli.run(["join", "#nope"]);
  expect(none.code).toBe(4);
  expect(none.stderr).toBe(
    "wsync: No channel named #nope that you can see (a secret channel is joined by its link)\n",
  );
}, 60_000);
