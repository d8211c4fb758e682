import { useEffect, useState } from "react";
import type { LinkOffer, LinkReceived } from "../../../core/client/account/device-link-flow.ts";
import { loadClient } from "../../state/engine.ts";
import { boardTarget } from "../../state/resume.ts";
import { CompareActions, clock, DeviceLinkText, Digits, errorText, QrImage } from "./device-link-ui.tsx";

const T = DeviceLinkText;

type Phase =
  | { step: "opening" }
  | { step: "waiting"; offer: LinkOffer }
  | { step: "compare"; offer: LinkOffer; received: LinkReceived }
  | { step: "differ" }
  | { step: "failed"; error: string };

/**
 * "Link from another device" on a browser signed in without the key (protocol §8 "Fresh devices";
 * docs/device-linking.md): shows a link code as text and as a QR image, waits for a signed-in device
 * to send, then shows the six digits. Only when the user says the other device shows the same ones
 * does this device take the key and trust state (`accept`), and the board opens.
 */
export function LinkThisDevice({ onLinked }: { onLinked?: () => void }) {
  const [phase, setPhase] = useState<Phase>({ step: "opening" });
  const [attempt, setAttempt] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` starts a new link.
  useEffect(() => {
    let alive = true;
    const stop = new AbortController();
    setPhase({ step: "opening" });
    setError(null);
    void (async () => {
      const { offer, receive } = await (await loadClient()).linkThisDevice();
      if (!alive) return;
      setPhase({ step: "waiting", offer });
      const received = await receive(stop.signal);
      if (alive) setPhase({ step: "compare", offer, received });
    })().catch((e) => {
      if (alive) setPhase({ step: "failed", error: errorText(e) });
    });
    return () => {
      alive = false;
      stop.abort();
    };
  }, [attempt]);

  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);

  async function accept(received: LinkReceived) {
    setBusy(true);
    setError(null);
    try {
      await received.accept();
      (onLinked ?? (() => window.location.replace(boardTarget())))();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  }

  const again = (
    <div className="actions">
      <button type="button" className="primary" onClick={() => setAttempt((a) => a + 1)}>
        {T.startAgain}
      </button>
    </div>
  );

  if (phase.step === "opening") return <p className="status-line">{T.opening}</p>;
  if (phase.step === "failed")
    return (
      <>
        <p className="field-error" role="alert">
          {phase.error}
        </p>
        {again}
      </>
    );
  if (phase.step === "differ")
    return (
      <>
        <p className="warning" role="alert">
          {T.differNew}
        </p>
        {again}
      </>
    );

  const { offer } = phase;
  return (
    <div className="device-link">
      {phase.step === "waiting" ? (
        <>
          <p>{T.intro}</p>
          <div className="link-code">
            <QrImage text={offer.text} label={`${T.codeLabel} (QR code)`} />
            <label className="field">
              <span>{T.codeLabel}</span>
              <textarea
                readOnly
                rows={3}
                value={offer.text}
                data-testid="link-code"
                spellCheck={false}
                onFocus={(e) => e.currentTarget.select()}
              />
            </label>
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard?.writeText(offer.text);
                setCopied(true);
              }}
            >
              {copied ? T.copied : T.copy}
            </button>
          </div>
          <p className="status-line" role="status">
            {T.waiting(clock(offer.expiresAt))}
          </p>
        </>
      ) : (
        <>
          <p>{T.received}</p>
          <Digits value={phase.received.confirmation} />
          {error ? (
            <p className="field-error" role="alert">
              {error}
            </p>
          ) : null}
          <CompareActions
            busy={busy}
            busyLabel={T.accepting}
            onSame={() => void accept(phase.received)}
            onDiffer={() => setPhase({ step: "differ" })}
          />
        </>
      )}
    </div>
  );
}
