import { useEffect, useRef, useState } from "react";
import { Files } from "./lazy.tsx";

/**
 * The paperclip of the composer, and files dropped on the open channel or pasted into it (issue 31).
 * Only this much is in the page's first script (kept small: /sync's budget); the panel that sends
 * (FileSend.tsx) loads when a file is picked. More files while the panel is open join its list.
 */
export function AttachButton({ channelId }: { channelId: string }) {
  const [files, setFiles] = useState<File[] | null>(null);
  const input = useRef<HTMLInputElement>(null);
  // Copied at once: an input's FileList empties when the input is reset.
  const add = (list?: FileList | null) => {
    const picked = [...(list ?? [])];
    if (picked.length) setFiles((f) => [...(f ?? []), ...picked]);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: `add` only calls the stable setFiles.
  useEffect(() => {
    const view = input.current?.closest("section");
    const on = (e: Event) => {
      const d = (e as DragEvent).dataTransfer ?? (e as ClipboardEvent).clipboardData;
      if (!d?.types.includes("Files")) return;
      // Dragging over: without this the browser would open a dropped file in place of the board.
      e.preventDefault();
      if (e.type !== "dragover") add(d.files);
    };
    const gone = new AbortController();
    for (const n of ["dragover", "drop", "paste"]) view?.addEventListener(n, on, { signal: gone.signal });
    return () => gone.abort();
  }, []);
  return (
    <>
      {files && <Files channelId={channelId} files={files} onClose={() => setFiles(null)} />}
      <button
        type="button"
        className="attach"
        aria-label="Attach a file"
        onClick={() => input.current?.click()}
      >
        📎
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        onChange={(e) => {
          add(e.target.files);
          e.target.value = "";
        }}
      />
    </>
  );
}
