import { useEffect, useMemo, useRef, useState } from "react";
import type { FileSendJob } from "../../../../core/client/files/send-file.ts";
import { isTransient } from "../../../../core/client/files/send-file.ts";
import { CHUNKS_PER_PUT_MAX } from "../../../../core/protocol/blob-paths.ts";
import { loadClient } from "../../../state/engine.ts";
import { blobPieces, isInlineImage, prepareImage, sizeText } from "./image-prep.ts";

/** The words of the panel (tests read them). */
export const FileSendText = {
  original: "Send the original (keeps its location and camera data)",
  cancelled: "Upload cancelled",
  retry: "Retry",
} as const;

/** A media type the file message accepts (core/crypto/file-message.ts); anything else is sent as bytes. */
const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;
const mimeOf = (f: File) => (MIME_RE.test(f.type) ? f.type : "application/octet-stream");

const isAbort = (e: unknown) => e instanceof DOMException && e.name === "AbortError";

/** A local preview of a picked image (its own blob: URL, revoked when the panel closes). */
function Preview({ file }: { file: File }) {
  const url = useMemo(() => URL.createObjectURL(file), [file]);
  useEffect(() => () => URL.revokeObjectURL(url), [url]);
  return <img className="file-send-preview" src={url} alt="" />;
}

type Phase =
  | { at: "confirm" }
  | { at: "sending"; index: number; done: number; total: number }
  | { at: "error"; text: string; retry: boolean };

/**
 * Files about to be sent to the open channel (issue 31): each goes as its own message, encrypted in
 * the browser. Images get a 320 px thumbnail and a ThumbHash, and are re-encoded through a canvas
 * (which drops EXIF and GPS data) unless the sender ticks "original". While a file uploads the panel
 * shows its progress and a Cancel; a refusal (the server's limit, its quota) stays in the panel in
 * the server's words. More files dropped meanwhile join the list.
 */
export function FileSend({
  channelId,
  files,
  onClose,
}: {
  channelId: string;
  files: File[];
  onClose: () => void;
}) {
  const [phase, setPhase] = useState<Phase>({ at: "confirm" });
  const [original, setOriginal] = useState(false);
  const [caption, setCaption] = useState("");
  const abort = useRef<AbortController | null>(null);
  const latest = useRef(files);
  latest.current = files;
  const images = files.some((f) => isInlineImage(f.type) && f.type !== "image/gif");

  // The file being sent and its job: a Retry after the automatic resumption gave up runs the same
  // job again (same message id, key and blob id), so the upload goes on where it stopped.
  const at = useRef<{ index: number; job: FileSendJob | null }>({ index: 0, job: null });

  const send = async () => {
    // A Retry keeps the controller its job was made with; a Cancel aborted it, and that ends the panel.
    const controller = abort.current ?? new AbortController();
    abort.current = controller;
    const { signal } = controller;
    try {
      const client = await loadClient();
      const api = await client.files();
      // The page's memory is not the bound here (the bodies are Blobs, outside the JS heap): the
      // most chunks per PUT, fewest requests (docs/decisions/upload.md).
      api.blobs.batch = CHUNKS_PER_PUT_MAX;
      // The list may grow while earlier files upload (more dropped): read it afresh each round.
      for (let index = at.current.index; index < latest.current.length; index++) {
        const file = latest.current[index] as File;
        at.current.index = index;
        setPhase({ at: "sending", index, done: 0, total: file.size });
        let job = at.current.job;
        if (!job) {
          const image = await prepareImage(file, original);
          signal.throwIfAborted();
          const body = image?.file ?? file;
          // Progress redraws the panel only when the whole percent changes (not once per chunk).
          let shown = -1;
          job = api.job(
            channelId,
            {
              name: file.name || "file",
              mime: image?.mime ?? mimeOf(file),
              size: body.size,
              open: () => blobPieces(body),
              text: index === 0 ? caption.trim() : "",
              ...(image
                ? {
                    width: image.width,
                    height: image.height,
                    placeholder: image.placeholder,
                    thumb: image.thumb,
                  }
                : {}),
              onProgress: (done, total) => {
                const pct = total > 0 ? Math.floor((done / total) * 100) : 0;
                if (pct === shown) return;
                shown = pct;
                setPhase({ at: "sending", index, done, total });
              },
              signal,
            },
            // The server names its own limit (413 "File is larger than the 25 MB limit"): a server
            // may set another, so the browser does not guess it.
            Number.POSITIVE_INFINITY,
          );
          at.current.job = job;
        }
        await job.run();
        at.current = { index: index + 1, job: null };
      }
      abort.current = null;
      onClose();
    } catch (e) {
      if (signal.aborted || isAbort(e)) {
        abort.current = null;
        onClose();
        return;
      }
      // Only a lost connection or a server error is worth retrying; a refusal (limit, quota) is final.
      const retry = at.current.job !== null && isTransient(e);
      if (!retry) abort.current = null;
      setPhase({
        at: "error",
        text: e instanceof Error ? e.message : "The file could not be sent",
        retry,
      });
    }
  };

  if (phase.at === "error")
    return (
      <div className="file-send" data-testid="file-send">
        <p className="file-send-error" role="alert">
          {phase.text}
        </p>
        <div className="file-send-actions">
          {phase.retry ? (
            <button type="button" className="primary" onClick={() => void send()}>
              {FileSendText.retry}
            </button>
          ) : null}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    );

  if (phase.at === "sending") {
    const file = files[phase.index];
    const pct = phase.total > 0 ? Math.min(100, Math.floor((phase.done / phase.total) * 100)) : 0;
    return (
      <div className="file-send" data-testid="file-send">
        <p role="status">
          Sending {file?.name} {files.length > 1 ? `(${phase.index + 1} of ${files.length}) ` : ""}
          {pct}%
        </p>
        <progress max={100} value={pct} aria-label="Upload progress" />
        <div className="file-send-actions">
          <button
            type="button"
            onClick={() => abort.current?.abort(new DOMException(FileSendText.cancelled, "AbortError"))}
          >
            Cancel
          </button>
        </div>
      </div>
    );
  }

  return (
    <fieldset className="file-send" data-testid="file-send" aria-label="Send files">
      <ul>
        {files.map((f, n) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the list only grows at its end.
          <li key={n}>
            {isInlineImage(f.type) ? <Preview file={f} /> : <span className="file-icon">📄</span>}
            <span className="file-name">{f.name || "file"}</span>
            <span className="file-size">{sizeText(f.size)}</span>
          </li>
        ))}
      </ul>
      <input
        type="text"
        className="file-caption"
        aria-label="Caption"
        placeholder="Add a caption (optional)"
        value={caption}
        maxLength={4000}
        onChange={(e) => setCaption(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void send();
          } else if (e.key === "Escape") onClose();
        }}
      />
      {images ? (
        <label className="file-original">
          <input type="checkbox" checked={original} onChange={(e) => setOriginal(e.target.checked)} />
          {FileSendText.original}
        </label>
      ) : null}
      <div className="file-send-actions">
        <button type="button" className="primary" onClick={() => void send()}>
          Send
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
