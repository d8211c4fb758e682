import { type ChangeEvent, useState } from "react";
import {
  CryptoText,
  validatePrivateKeyFromImage,
  validatePrivateKeyText,
} from "../../../core/crypto/index.ts";
import { Modal } from "../../components/Modal.tsx";
import { loadClient } from "../../state/engine.ts";
import { readKeyImage } from "./key-image.ts";

/** Spec §5: the image read failure message is in Georgian ("the key code could not be read"). */
export const IMAGE_READ_FAILED = "გასაღების კოდის წაკითხვა ვერ მოხერხდა";

/**
 * Spec §2.6: shown when the server knows a public key but this browser has no (matching) private key.
 * Two tabs: paste the key as text, or pick a Shadow Cipher picture. It closes only by validating.
 */
export function PrivateKeyValidationModal() {
  const [tab, setTab] = useState<"text" | "image">("text");
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function validate(key: string, formatError: string | null) {
    if (formatError) {
      setError(formatError);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await (await loadClient()).validatePrivateKey(key);
      // Spec §2.6: after validation the app initialises crypto and goes to /sync.
      window.location.replace("/sync");
    } catch (e) {
      setError(e instanceof Error ? e.message : CryptoText.privateKeySaveFailed);
    } finally {
      setBusy(false);
    }
  }

  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    let key: string;
    try {
      key = await readKeyImage(file);
    } catch {
      setError(IMAGE_READ_FAILED);
      return;
    }
    await validate(key, validatePrivateKeyFromImage(key));
  }

  return (
    <Modal title="Private Key Validation" labelledBy="pkv-title">
      <p>This browser has no private key for your account. Restore it to read and send messages.</p>
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === "text"} onClick={() => setTab("text")}>
          Text
        </button>
        <button type="button" role="tab" aria-selected={tab === "image"} onClick={() => setTab("image")}>
          Shadow Cipher image
        </button>
      </div>
      {tab === "text" ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void validate(text.trim(), validatePrivateKeyText(text));
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
            {busy ? "Validating..." : "Validate Key"}
          </button>
        </form>
      ) : (
        <label className="field">
          <span>Shadow Cipher image</span>
          <input type="file" name="keyImage" accept="image/*" onChange={(e) => void onFile(e)} />
        </label>
      )}
      {error ? (
        <p className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </Modal>
  );
}
