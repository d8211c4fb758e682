/**
 * The CLI and the core engine (what the browser runs) talk to each other through a real server:
 * each decrypts and verifies what the other sent. And a Shadow Cipher PNG exported by the CLI
 * restores the same private key on a fresh device.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decode, encode } from "fast-png";
import { decodeKeyImageToBase64 } from "../../core/shadow-cipher/index.ts";
import { newClient, signedUp, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { Cli, type CliUser, cleanupTempDirs, PASSWORD, registerCli, tempDir } from "./cli-harness.ts";

let t: TestServer;
let engine: Awaited<ReturnType<typeof signedUp>>;
let cli: CliUser;
let channelId: string;

interface ItemJson {
  kind: string;
  text: string | null;
  verified: boolean;
  state: string;
  author: { did: string; handle: string };
}

beforeAll(async () => {
  t = await startTestServer();
  engine = await signedUp(t.url, "engine");
  cli = await registerCli(t.url, "cli");
  const { channel } = await engine.client.createChannel({ name: "interop", type: "public" });
  channelId = channel.id;
  await cli.cli.ok(["join", channelId]);
  await engine.client.open(channelId);
});
afterAll(async () => {
  engine?.client.disconnect();
  await t.stop();
  cleanupTempDirs();
});

test("a message sent by the CLI is decrypted and verified by a core engine", async () => {
  const uri = (await cli.cli.ok(["send", channelId, "sent by the cli ✓"])).trim();
  await until(
    () => engine.client.view(channelId)?.items.some((i) => i.uri === uri) ?? false,
    10_000,
    "the engine to receive the CLI's message",
  );
  const item = engine.client.view(channelId)?.items.find((i) => i.uri === uri);
  expect(item).toMatchObject({
    kind: "message",
    text: "sent by the cli ✓",
    verified: true,
    state: "success",
  });
  expect(item?.author.did).toBe(cli.did);

  // The same account on a second engine, which loads the history instead of the live push, agrees.
  const { client: second } = newClient(t.url);
  try {
    // signedUp registers with the same password the CLI harness uses.
    await second.login(engine.handle, PASSWORD);
    await second.validatePrivateKey(engine.keys.privateKey);
    const view = await second.open(channelId);
    const loaded = view.items.find((i) => i.uri === uri);
    expect(loaded).toMatchObject({ text: "sent by the cli ✓", verified: true, state: "success" });
  } finally {
    second.disconnect();
  }
});

test("a message sent by a core engine is decrypted and verified by the CLI", async () => {
  const sent = await engine.client.send(channelId, "sent by the engine\nwith two lines");
  const items = JSON.parse(await cli.cli.ok(["read", channelId, "--json"])) as (ItemJson & { uri: string })[];
  const item = items.find((i) => i.uri === sent.uri);
  expect(item).toMatchObject({
    kind: "message",
    text: "sent by the engine\nwith two lines",
    verified: true,
    state: "success",
  });
  expect(item?.author.did).toBe(engine.did);
  const human = await cli.cli.ok(["read", channelId]);
  expect(human).toContain(`${engine.handle} ✓ sent by the engine`);
});

test("a Shadow Cipher PNG from `keys export --qr` restores the same key in a fresh config directory", async () => {
  const dir = tempDir("wsync-png-");
  const png = join(dir, "key.png");
  const exported = await cli.cli.run(["keys", "export", "--qr", png]);
  expect(exported.code).toBe(0);
  expect(exported.stdout).toBe("");
  expect(exported.stderr).toContain(`Wrote ${png}`);
  expect(statSync(png).mode & 0o777).toBe(0o600);
  const textKey = (await cli.cli.ok(["keys", "export"])).trim();

  // Core's own decoder reads the same key out of the picture.
  const image = decode(readFileSync(png));
  expect(image.channels).toBe(4);
  expect(image.depth).toBe(8);
  const decoded = decodeKeyImageToBase64({
    width: image.width,
    height: image.height,
    data: new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.byteLength),
  });
  expect(decoded).toBe(textKey);

  // A second device: sign in, import the picture, read the history the first device could read.
  const device = new Cli(t.url);
  const login = await device.run(["login", "--identifier", cli.handle, "--password-stdin"], {
    stdin: `${PASSWORD}\n`,
  });
  expect(login.code).toBe(0);
  expect(login.stderr).toContain("wsync keys import");
  expect((await device.run(["read", channelId])).code).toBe(3);

  // A PNG that is not a key picture is refused with a usage error.
  const blank = join(dir, "blank.png");
  writeFileSync(
    blank,
    encode({ width: 64, height: 64, data: new Uint8Array(64 * 64 * 4).fill(255), channels: 4, depth: 8 }),
  );
  const refused = await device.run(["keys", "import", "--qr", blank]);
  expect(refused.code).toBe(2);

  expect(await device.ok(["keys", "import", "--qr", png])).toBe("Private key restored\n");
  expect((await device.ok(["keys", "export"])).trim()).toBe(textKey);
  const items = JSON.parse(await device.ok(["read", channelId, "--json"])) as ItemJson[];
  const messages = items.filter((i) => i.kind === "message");
  expect(messages.map((i) => [i.text, i.verified, i.state])).toEqual([
    ["sent by the cli ✓", true, "success"],
    ["sent by the engine\nwith two lines", true, "success"],
  ]);
  // The first device is still signed in.
  expect((await cli.cli.run(["whoami"])).code).toBe(0);
});

test("read --limit above one page loads older pages (the engine's history, verified by the CLI)", async () => {
  for (let i = 0; i < 60; i++) await engine.client.send(channelId, `bulk ${i}`);
  const items = JSON.parse(await cli.cli.ok(["read", channelId, "--json", "--limit", "60"])) as ItemJson[];
  expect(items.length).toBe(60);
  expect(items.at(-1)?.text).toBe("bulk 59");
  expect(items.filter((i) => i.text?.startsWith("bulk ")).length).toBe(60);
  expect(items.every((i) => i.kind !== "message" || (i.verified && i.state === "success"))).toBe(true);
  const all = JSON.parse(await cli.cli.ok(["read", channelId, "--json", "--limit", "100"])) as ItemJson[];
  // Everything the channel holds: the CLI's join notice and 62 messages, and the signed epoch change
  // that let the CLI in (a row of the client's own, between records).
  expect(all.filter((i) => i.kind === "message" || i.kind === "notify").length).toBe(63);
  expect(all.filter((i) => i.kind === "epoch").length).toBeGreaterThanOrEqual(1);
});
