import { useEffect, useMemo, useState } from "react";
import { thumbHashToDataURL } from "thumbhash";
import type { Snapshot } from "valtio";
import type { TimelineItem } from "../../../../core/client/view/state.ts";
import { fromBase64 } from "../../../../core/crypto/base64.ts";
import type { FileInfo } from "../../../../core/crypto/file-message.ts";
import { Modal } from "../../../components/Modal.tsx";
import { saveBlob } from "../../../components/save-blob.ts";
import { hasWarningNote } from "../messages/SecurityRows.tsx";
import { decryptToBlob, thumbUrl } from "./decrypt.ts";
import { isInlineImage, sizeText } from "./image-prep.ts";

type Item = Snapshot<TimelineItem>;
type File = Snapshot<FileInfo>;

export const FileText = {
  unverified: "not opened: the message carrying it did not verify",
  failed: "The file could not be opened",
} as const;

const pct = (done: number, total: number) =>
  total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;

function placeholderUrl(placeholder: string | undefined): string | null {
  if (!placeholder) return null;
  try {
    return thumbHashToDataURL(fromBase64(placeholder));
  } catch {
    return null;
  }
}

/** The full image, decrypted in the browser into a blob: URL that is revoked when the view closes. */
function FullImage({ file, onClose }: { file: File; onClose: () => void }) {
  const [url, setUrl] = useState<string | null>(null);
  const [progress, setProgress] = useState(0);
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one file per blob id.
  useEffect(() => {
    const controller = new AbortController();
    let made: string | null = null;
    decryptToBlob(file, file.mime, (d, t) => setProgress(pct(d, t)), controller.signal).then(
      (blob) => {
        if (controller.signal.aborted) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      (e: unknown) => {
        if (!controller.signal.aborted) setError(e instanceof Error ? e.message : FileText.failed);
      },
    );
    return () => {
      controller.abort();
      if (made) URL.revokeObjectURL(made);
    };
  }, [file.blob]);
  const id = `file-${file.blob}`;
  return (
    <Modal title={file.name} labelledBy={id} portal className="file-viewer" onEscape={onClose}>
      <h2 id={id} className="file-viewer-name">
        {file.name}
      </h2>
      {url ? (
        <img className="file-full" src={url} alt={file.name} />
      ) : error ? (
        <p className="file-error" role="alert">
          {FileText.failed}: {error}
        </p>
      ) : (
        <p role="status">Decrypting… {progress}%</p>
      )}
      <div className="actions">
        {url ? (
          <a className="button" href={url} download={file.name}>
            Download
          </a>
        ) : null}
        <button type="button" onClick={onClose} data-autofocus>
          Close
        </button>
      </div>
    </Modal>
  );
}

/** An image inline: its ThumbHash at once, the decrypted thumbnail over it, and a click for full size. */
function ImageAttachment({ file }: { file: File }) {
  const thumb = file.thumb as NonNullable<File["thumb"]>;
  const placeholder = useMemo(() => placeholderUrl(file.placeholder), [file.placeholder]);
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one thumbnail per blob id.
  useEffect(() => {
    let live = true;
    thumbUrl(file as FileInfo).then(
      (u) => live && setSrc(u),
      (e: unknown) => live && setError(e instanceof Error ? e.message : FileText.failed),
    );
    return () => {
      live = false;
    };
  }, [thumb.blob]);
  return (
    <span className="file-attachment">
      <button
        type="button"
        className="file-image"
        aria-label={`Open ${file.name}`}
        title={`${file.name} (${sizeText(file.size)}${file.width ? `, ${file.width}×${file.height}` : ""})`}
        style={{
          aspectRatio: `${thumb.width} / ${thumb.height}`,
          width: `${thumb.width}px`,
          ...(placeholder ? { backgroundImage: `url("${placeholder}")` } : {}),
        }}
        data-placeholder={placeholder ? "thumbhash" : "none"}
        onClick={() => setOpen(true)}
      >
        {src ? <img className="file-thumb" src={src} alt={file.name} /> : null}
      </button>
      {error ? (
        <span className="file-error" role="alert">
          {FileText.failed}: {error}
        </span>
      ) : null}
      {open ? <FullImage file={file} onClose={() => setOpen(false)} /> : null}
    </span>
  );
}

/** Any other file: its name, size and a download that decrypts as it streams. */
function FileCard({ file }: { file: File }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    setError(null);
    setProgress(0);
    try {
      saveBlob(
        await decryptToBlob(file, "application/octet-stream", (d, t) => setProgress(pct(d, t))),
        file.name,
      );
    } catch (e) {
      setError(e instanceof Error ? e.message : FileText.failed);
    } finally {
      setProgress(null);
    }
  };
  return (
    <span className="file-attachment">
      <span className="file-card">
        <span className="file-icon" aria-hidden="true">
          📄
        </span>
        <span className="file-name">{file.name}</span>
        <span className="file-size">{sizeText(file.size)}</span>
        <button
          type="button"
          aria-label={`Download ${file.name}`}
          disabled={progress !== null}
          onClick={() => void download()}
        >
          {progress === null ? "Download" : `${progress}%`}
        </button>
      </span>
      {error ? (
        <span className="file-error" role="alert">
          {FileText.failed}: {error}
        </span>
      ) : null}
    </span>
  );
}

/**
 * A file message's attachment (issue 31). Only a verified message's file is opened, as the CLI's
 * `wsync get` does: its key and name are trusted only from a signature that checked.
 */
export function FileAttachment({ item }: { item: Item }) {
  const f = item.file;
  if (!f || item.deleted) return null;
  if (!item.verified || hasWarningNote(item.notes) || item.state !== "success")
    return (
      <span className="file-attachment">
        <span className="file-card unverified">
          📄 <span className="file-name">{f.name}</span> {FileText.unverified}
        </span>
      </span>
    );
  if (f.thumb && isInlineImage(f.mime)) return <ImageAttachment file={f} />;
  return <FileCard file={f} />;
}
