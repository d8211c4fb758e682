import { type ChangeEvent, useState } from "react";
import { validatePrivateKeyFromImage, validatePrivateKeyText } from "../../../core/crypto/index.ts";
import { readKeyImage } from "./key-image.ts";

/** Spec §5: the image read failure message is in Georgian ("the key code could not be read"). */
export const IMAGE_READ_FAILED = "გასაღების კოდის წაკითხვა ვერ მოხერხდა";

/**
 * The private key pasted as text (the whole wsync-keys.txt is fine): the spec's format check first
 * (spec §5 texts), then `onKey` with the text; the engine's check names any further problem.
 */
export function KeyTextForm({
  onKey,
  onError,
  busy,
  submitLabel = "Validate Key",
  busyLabel = "Validating...",
}: {
  onKey(key: string): void;
  onError(message: string): void;
  busy: boolean;
  submitLabel?: string;
  busyLabel?: string;
}) {
  const [text, setText] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const problem = validatePrivateKeyText(text);
        if (problem) onError(problem);
        else onKey(text.trim());
      }}
    >
      <label className="field">
        <span>Private Key</span>
        <textarea
          name="privateKey"
          rows={4}
          value={text}
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
        />
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? busyLabel : submitLabel}
      </button>
    </form>
  );
}

/** A Shadow Cipher picture of the private key (spec §2.6: 20 px cells, 60 px margin), read to text. */
export function KeyImageField({
  onKey,
  onError,
}: {
  onKey(key: string): void;
  onError(message: string): void;
}) {
  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    let key: string;
    try {
      key = await readKeyImage(file);
    } catch {
      onError(IMAGE_READ_FAILED);
      return;
    }
    const problem = validatePrivateKeyFromImage(key);
    if (problem) onError(problem);
    else onKey(key);
  }
  return (
    <label className="field">
      <span>Shadow Cipher image</span>
      <input type="file" name="keyImage" accept="image/*" onChange={(e) => void onFile(e)} />
    </label>
  );
}
