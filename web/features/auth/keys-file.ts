/** "Download Keys" (and "Download key first" before a logout) saves KEYS_FILE; the text is core's. */
export { KEYS_FILE, keysFileText } from "../../../core/crypto/identity.ts";

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
