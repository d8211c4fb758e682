import type { Command } from "commander";
import { encodeQR } from "qr";
import { DeviceLinkError } from "../../core/client/index.ts";
import { normalizeDeviceLinkCode } from "../../core/crypto/index.ts";
import { type GlobalOptions, KeyStateText, sessionClient, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { readPngImage } from "../png.ts";
import { confirm, interactive, io } from "../prompt.ts";

/**
 * `wsync device link` (on a new device, signed in without the key) and `wsync device add CODE` (on a
 * signed-in one): protocol §8 "Fresh devices", docs/device-linking.md. The new device shows a code
 * with its ephemeral key (as text and as a QR code), the signed-in one takes it, both show six digits,
 * and only after the person says they match does the key (with the trust state) go over, and only
 * then does the new device take it.
 */

interface DeviceOpts extends GlobalOptions {
  json?: boolean;
  yes?: boolean;
  qr?: string;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as DeviceOpts;

export const DeviceText = {
  linkIntro:
    'On a device where you are signed in, run `wsync device add CODE` (or choose "link a device" in the web app) with this code, or scan the QR code:',
  waiting: (until: string) =>
    `Waiting for the other device (the code works until ${until}; Ctrl+C to stop)...`,
  compareNew: "The other device answered. Compare the digits it shows with these:",
  compareOld: "Compare these digits with the ones the new device shows:",
  question: "Do the digits match on the other device?",
  refuse: (command: string) =>
    `Linking a device needs someone to compare six digits on both devices: run \`${command}\` on a terminal, or add --yes to accept without asking (only where you compare the digits yourself)`,
  cancelledNew:
    "Cancelled: the digits differ, so nothing was taken from the other device. Someone may be in between: start again with `wsync device link`",
  cancelledOld:
    "Cancelled: the digits differ, so nothing was sent. Someone may be in between: start again on the new device",
  linked: "Device linked: your private key and trust state are on this device",
  sent: "Sent: confirm the same digits on the new device to finish there",
  hasKey:
    "This device already holds your private key: run `wsync device link` on the new device, and `wsync device add CODE` here",
  noQr: (path: string) => `No QR code could be read from ${path}: give the code as text instead`,
  oneSource: "device add: give the CODE or --qr FILE.png, not both",
  noSource: "device add: give the CODE the new device shows (or --qr FILE.png, a picture of its QR code)",
} as const;

/** Local "HH:MM". */
const clock = (ms: number) => {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
};

const json = (o: object) => io.out(`${JSON.stringify(o)}\n`);

/** The engine's refusals of a code, with the exit code each one is (docs/cli.md). */
function linkError(e: unknown): unknown {
  if (!(e instanceof DeviceLinkError)) return e;
  const code = {
    "not-a-code": ExitCode.usage,
    "no-slot": ExitCode.notFound,
    "key-mismatch": ExitCode.security,
    "not-exportable": ExitCode.auth,
    expired: ExitCode.other,
    cancelled: ExitCode.other,
    "bad-payload": ExitCode.security,
  }[e.problem];
  return new CliError(e.message, code);
}

/** Asks whether the digits match (or takes --yes); "no" stops with exit 1 and `cancelled`. */
async function digitsMatch(o: DeviceOpts, cancelled: string): Promise<void> {
  if (o.yes) return;
  if (!(await confirm(DeviceText.question))) throw new CliError(cancelled, ExitCode.other);
}

export function registerDeviceCommands(program: Command): void {
  const device = program
    .command("device")
    .description("link a new device: it gets your key and what this device has verified");

  device
    .command("link")
    .description(
      "on a new device (after `wsync login` without the key): show a code, wait for `wsync device add`, compare the digits, take the key",
    )
    .option("--json", "print NDJSON events: code, confirmation, linked")
    .option("-y, --yes", "accept without asking whether the digits match (required without a terminal)")
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd);
      if (!o.yes && !interactive()) throw usageError(DeviceText.refuse("wsync device link"));
      const { client } = await sessionClient(o);
      const state = client.state.auth.keyState;
      if (state === "ready") throw usageError(DeviceText.hasKey);
      if (state === "lost" || state === "unconfirmed") throw new CliError(KeyStateText[state], ExitCode.auth);

      const { offer, receive } = await client.linkThisDevice();
      if (o.json) {
        json({
          type: "code",
          code: offer.code,
          text: offer.text,
          expiresAt: new Date(offer.expiresAt).toISOString(),
        });
      } else {
        io.err(`${DeviceText.linkIntro}\n`);
        io.out(`${offer.text}\n`);
        // Light modules drawn with blocks: made for a terminal's dark background.
        io.err(`\n${encodeQR(offer.text, "ascii", { ecc: "medium" })}\n`);
      }
      io.err(`${DeviceText.waiting(clock(offer.expiresAt))}\n`);

      const received = await receive();
      if (o.json) json({ type: "confirmation", confirmation: received.confirmation });
      else {
        io.err(`${DeviceText.compareNew}\n`);
        io.out(`Confirmation: ${received.confirmation}\n`);
      }
      if (o.json && !o.yes) io.err(`Confirmation: ${received.confirmation}\n`);
      await digitsMatch(o, DeviceText.cancelledNew);
      await received.accept();
      const me = client.state.auth.user;
      if (o.json) json({ type: "linked", did: me?.did ?? null, handle: me?.handle ?? null });
      else io.out(`${DeviceText.linked}\n`);
    });

  device
    .command("add [code]")
    .description(
      "on a signed-in device: send your key and trust state to the new device showing CODE, after comparing the digits",
    )
    .option("--qr <file.png>", "read the code from a picture of the new device's QR code instead")
    .option("--json", "print JSON: code, confirmation, sent")
    .option("-y, --yes", "send without asking whether the digits match (required without a terminal)")
    .action(async (code: string | undefined, _o, cmd: Command) => {
      const o = opts(cmd);
      if (code && o.qr) throw usageError(DeviceText.oneSource);
      if (!code && !o.qr) throw usageError(DeviceText.noSource);
      if (!o.yes && !interactive()) throw usageError(DeviceText.refuse("wsync device add CODE"));
      let text = code ?? "";
      if (o.qr) {
        const { decodeQR } = await import("qr/decode.js");
        try {
          text = decodeQR(readPngImage(o.qr));
        } catch (e) {
          if (e instanceof CliError) throw e;
          throw usageError(DeviceText.noQr(o.qr));
        }
      }
      const { client } = await signedInClient(o);
      const link = await client.linkOtherDevice(text).catch((e) => {
        throw linkError(e);
      });
      if (o.json) {
        if (!o.yes) io.err(`${DeviceText.compareOld}\nConfirmation: ${link.confirmation}\n`);
      } else {
        io.err(`${DeviceText.compareOld}\n`);
        io.out(`Confirmation: ${link.confirmation}\n`);
      }
      await digitsMatch(o, DeviceText.cancelledOld);
      await link.send().catch((e) => {
        throw linkError(e);
      });
      const canonical = normalizeDeviceLinkCode(text.split(".")[0] ?? "") ?? null;
      if (o.json) json({ code: canonical, confirmation: link.confirmation, sent: true });
      else io.out(`${DeviceText.sent}\n`);
    });
}
