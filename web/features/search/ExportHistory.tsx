import { useState } from "react";
import { loadClient } from "../../state/engine.ts";

/** The words of the info panel's EXPORT section. */
export const ExportText = {
  heading: "EXPORT",
  format: "Format",
  button: "EXPORT_HISTORY",
  hint: "The whole decrypted history of this channel, with authors, signed times and verification, saved as a file on this device.",
  reading: (n: number) => `Reading the history: ${n.toLocaleString("en")} records`,
  done: (n: number, name: string) => `Saved ${n.toLocaleString("en")} messages as ${name}`,
  failed: (why: string) => `Export failed: ${why}`,
} as const;

type Format = "json" | "html" | "txt";
const FORMATS: { value: Format; label: string }[] = [
  { value: "json", label: "JSON" },
  { value: "html", label: "HTML" },
  { value: "txt", label: "Text" },
];

/**
 * The info panel's export (issue 32): the same file as `wsync export CHANNEL --format …`. The
 * exporter (core/export/) loads when the button is pressed, not with the panel.
 */
export function ExportHistory({ channelId }: { channelId: string }) {
  const [format, setFormat] = useState<Format>("json");
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setStatus(ExportText.reading(0));
    try {
      const [client, { exportChannel }] = await Promise.all([loadClient(), import("./export-channel.ts")]);
      const r = await exportChannel(client, channelId, format, (n) => setStatus(ExportText.reading(n)));
      setStatus(ExportText.done(r.messages, r.name));
    } catch (e) {
      setStatus(ExportText.failed((e as Error).message));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="channel-export" aria-labelledby="channel-export-h" data-testid="channel-export">
      <h4 id="channel-export-h">{ExportText.heading}</h4>
      <p>
        <label className="info-setting">
          {ExportText.format}
          <select value={format} disabled={busy} onChange={(e) => setFormat(e.target.value as Format)}>
            {FORMATS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="info-export" disabled={busy} onClick={() => void run()}>
          {ExportText.button}
        </button>
      </p>
      <p className="info-hint">{ExportText.hint}</p>
      {status ? (
        <p className="info-hint" role="status">
          {status}
        </p>
      ) : null}
    </section>
  );
}
