import { Link } from "@tanstack/react-router";
import { type ChangeEvent, useEffect, useState } from "react";
import { base64ToBytes } from "../../../core/shadow-cipher/index.ts";
import { loadClient } from "../../state/engine.ts";
import { download, keyImagePng, readKeyImage } from "../auth/key-image.ts";
import { KEY_IMAGE_FILE, KeyImageText as T } from "./text.ts";

type Result = { ok: boolean; text: string } | null;

/** Same key whatever the base64 spelling (padding, URL-safe characters, whitespace). */
export function sameKey(a: string, b: string): boolean {
  try {
    const x = base64ToBytes(a);
    const y = base64ToBytes(b);
    return x.length > 0 && x.length === y.length && x.every((v, i) => v === y[i]);
  } catch {
    return false;
  }
}

function GenerateTab() {
  const [png, setPng] = useState<{ blob: Blob; url: string } | null>(null);
  const [result, setResult] = useState<Result>(null);
  useEffect(() => () => (png ? URL.revokeObjectURL(png.url) : undefined), [png]);

  async function generate() {
    setResult(null);
    const key = await (await loadClient()).exportPrivateKey();
    if (!key) {
      setResult({ ok: false, text: T.noKey });
      return;
    }
    try {
      const blob = await keyImagePng(key);
      setPng({ blob, url: URL.createObjectURL(blob) });
    } catch {
      setResult({ ok: false, text: T.generateFailed });
    }
  }

  return (
    <div role="tabpanel" aria-label={T.generateTab}>
      <button type="button" className="primary" onClick={() => void generate()}>
        {T.generate}
      </button>
      {png ? (
        <>
          <img src={png.url} alt={T.title} width={400} height={400} data-testid="key-image-preview" />
          <button
            type="button"
            onClick={() => {
              download(KEY_IMAGE_FILE, png.blob);
              setResult({ ok: true, text: T.downloaded });
            }}
          >
            {T.download}
          </button>
        </>
      ) : null}
      {result ? <Message result={result} /> : null}
    </div>
  );
}

function ReadTab() {
  const [result, setResult] = useState<Result>(null);
  const [busy, setBusy] = useState(false);

  async function onFile(e: ChangeEvent<HTMLInputElement>) {
    const file = e.target.files?.[0];
    if (!file) return;
    setBusy(true);
    setResult(null);
    try {
      let read: string;
      try {
        read = await readKeyImage(file);
      } catch {
        setResult({ ok: false, text: T.readFailed });
        return;
      }
      const stored = await (await loadClient()).exportPrivateKey();
      if (!stored) setResult({ ok: false, text: T.noKey });
      else setResult(sameKey(read, stored) ? { ok: true, text: T.match } : { ok: false, text: T.mismatch });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div role="tabpanel" aria-label={T.readTab}>
      <label className="field">
        <span>{T.pick}</span>
        <input type="file" name="keyImage" accept="image/*" onChange={(e) => void onFile(e)} />
      </label>
      {busy ? <p className="status-line">{T.checking}</p> : null}
      {result ? <Message result={result} /> : null}
    </div>
  );
}

function Message({ result }: { result: NonNullable<Result> }) {
  return (
    <p
      className={`key-image-result ${result.ok ? "ok" : "bad"}`}
      role={result.ok ? "status" : "alert"}
      data-testid="key-image-result"
    >
      {result.text}
    </p>
  );
}

/**
 * /sync/qr (spec §2.1, §2.14): the stored private key as a Shadow Cipher picture (20 px cells, 60 px
 * margins; core/shadow-cipher). Generate draws it and downloads dna-key.png; Read takes a picture and
 * says whether it holds this account's key. Behind the messaging area's guard (SyncRoot).
 */
export function KeyImagePage() {
  const [tab, setTab] = useState<"generate" | "read">("generate");
  return (
    <section className="key-image-page" data-testid="key-image-page" lang="ka">
      <Link to="/sync">{T.back}</Link>
      <h1 className="glitch-title">{T.title}</h1>
      <p>{T.intro}</p>
      <div className="tabs" role="tablist">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "generate"}
          onClick={() => setTab("generate")}
        >
          {T.generateTab}
        </button>
        <button type="button" role="tab" aria-selected={tab === "read"} onClick={() => setTab("read")}>
          {T.readTab}
        </button>
      </div>
      {tab === "generate" ? <GenerateTab /> : <ReadTab />}
    </section>
  );
}
