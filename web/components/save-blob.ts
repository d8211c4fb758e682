/** Saves a blob under a name through a download link, then lets its URL go. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.rel = "noopener";
  document.body.append(a);
  a.click();
  a.remove();
  // The download has its own reference once it starts; the URL is not needed after that.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
