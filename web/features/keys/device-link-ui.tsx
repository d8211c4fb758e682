import { useMemo } from "react";
import { qrPath } from "./link-qr.ts";

/**
 * The words and small parts both sides of a device link share (docs/device-linking.md): the new
 * device (LinkThisDevice, in the Private Key Validation modal) and the signed-in one (LinkDeviceDialog,
 * from the board's menu).
 */
export const DeviceLinkText = {
  // The new device.
  tab: "Link from another device",
  intro:
    "On a device where you are signed in, choose “link a device” (in the web app, on the channel list) or run `wsync device add CODE` in the terminal, and scan this QR code or type the code below.",
  opening: "Making a link code...",
  codeLabel: "Link code",
  copy: "Copy code",
  copied: "Copied!",
  waiting: (until: string) => `Waiting for the other device (this code works until ${until})...`,
  received:
    "The other device answered. Compare the six digits below with the ones it shows before this device takes anything from it.",
  accepting: "Linking this device...",
  differNew:
    "Nothing was taken from the other device. Different digits mean the code did not reach it as this device showed it: someone may be in between. Choose “They differ” there too, then start again.",
  startAgain: "Start again",
  // The signed-in device.
  title: "Link a device",
  what: "Give a new device your private key and what this device has verified in your channels (its trust state), so it can read and send as you and does not start from the server's word.",
  checkingKey: "Checking this device's key...",
  needKey:
    "This browser stores your private key so that it cannot be read back, so it cannot hand it over by itself. Open your key backup to link the device, or give the key as text or as your Shadow Cipher image.",
  backupTab: "Backup passphrase",
  textTab: "Text",
  imageTab: "Shadow Cipher image",
  noBackup: "There is no key backup on the server: give the key as text or as your Shadow Cipher image.",
  secret: "Passphrase or recovery code",
  openBackup: "Open backup",
  openingBackup: "Opening...",
  useKey: "Use This Key",
  checking: "Checking...",
  keyReady: "The key to hand over is this account's private key.",
  codeIntro:
    "On the new device, sign in and choose “Link from another device” (or run `wsync device link`). Type the code it shows, or pick a picture of its QR code.",
  codeField: "Code shown on the new device",
  qrField: "Or a picture of its QR code",
  qrFailed: "No QR code could be read from that picture: type the code instead.",
  next: "Continue",
  preparing: "Looking up the new device...",
  compare: "Check that the new device shows the same six digits. Send only if they match.",
  sending: "Sending...",
  sent: "Sent. Confirm the same digits on the new device to finish there: it now has your key and this device's trust state.",
  differOld:
    "Nothing was sent. Different digits mean the code did not arrive here as the new device showed it: someone may be in between. Start again on the new device.",
  close: "Close",
  cancel: "Cancel",
  back: "Back",
  // Both.
  digitsLabel: "Confirmation digits",
  same: "The other device shows the same digits",
  differ: "They differ",
} as const;

/** The six confirmation digits, large and spaced for reading aloud (three and three). */
export function Digits({ value }: { value: string }) {
  return (
    <p className="link-digits">
      <span className="link-digits-label">{DeviceLinkText.digitsLabel}</span>
      <output
        data-testid="link-digits"
        aria-label={`${DeviceLinkText.digitsLabel}: ${value.split("").join(" ")}`}
      >
        {value}
      </output>
    </p>
  );
}

/** The code as a QR image: dark modules on white, whatever the theme, so a camera reads it. */
export function QrImage({ text, label }: { text: string; label: string }) {
  const { d, size } = useMemo(() => qrPath(text), [text]);
  return (
    <svg
      className="link-qr"
      viewBox={`0 0 ${size} ${size}`}
      role="img"
      aria-label={label}
      shapeRendering="crispEdges"
      data-testid="link-qr"
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}

/** "Do they match?": the only two answers. */
export function CompareActions({
  busy,
  busyLabel,
  onSame,
  onDiffer,
}: {
  busy: boolean;
  busyLabel: string;
  onSame(): void;
  onDiffer(): void;
}) {
  return (
    <div className="actions">
      <button type="button" className="primary" disabled={busy} onClick={onSame}>
        {busy ? busyLabel : DeviceLinkText.same}
      </button>
      <button type="button" className="danger" disabled={busy} onClick={onDiffer}>
        {DeviceLinkText.differ}
      </button>
    </div>
  );
}

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Local "HH:MM". */
export const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
