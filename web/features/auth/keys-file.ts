/** "Download Keys" (and "Download key first" before a logout) saves this file. */
export const KEYS_FILE = "wsync-keys.txt";

/** The text "Copy Keys" and "Download Keys" give; the validation modal accepts it whole. */
export const keysFileText = (keys: { publicKey: string; privateKey: string }) =>
  `Public Key:\n${keys.publicKey}\n\nPrivate Key:\n${keys.privateKey}\n`;

/** Saves a blob as a file download. */
export function download(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
