import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { type ChannelType, Limits } from "../../../core/protocol/runtime.ts";
import { Modal } from "../../components/Modal.tsx";
import { createChannel } from "../../state/channel-actions.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";

/** Spec §2.10: the three types with their exact labels and hints. */
const TYPES: readonly (readonly [ChannelType, string, string])[] = [
  ["public", "Public", "(anyone can join and see)"],
  ["invite", "Invite", "(+i, users can only join with an invite)"],
  ["secret", "Secret", "(+s, hidden from the list, invite only)"],
];

const close = () => {
  uiState.createDialogOpen = false;
};

/**
 * Create Channel (spec §2.10, §4.4, §5). Mounted only while open, so each opening starts from an
 * empty form. A secret channel's link is shown in place and the dialog stays open; public and invite
 * channels close it (the engine has already refetched the list and made the first epoch).
 */
export function CreateChannelDialog() {
  const ui = useSnapshot(uiState);
  return ui.createDialogOpen ? <CreateChannelForm /> : null;
}

function CreateChannelForm() {
  const auth = useSnapshot(engineState.auth);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState<ChannelType>("public");
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState("");
  const [link, setLink] = useState("");
  const [copied, setCopied] = useState(false);
  const nameRef = useRef<HTMLInputElement>(null);
  const linkRef = useRef<HTMLInputElement>(null);

  useEffect(() => nameRef.current?.focus(), []);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);

  // Spec §5: a non-empty trimmed name, not while loading, and only with a token and a public key.
  const canCreate = name.trim() !== "" && !loading && auth.isAuthenticated && !!auth.user?.publicKey;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!canCreate || link) return;
    setLoading(true);
    setError("");
    try {
      const res = await createChannel({ name: name.trim(), type, description: description.trim() });
      if (res.link) setLink(res.link);
      else close();
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : "Failed to create channel");
    } finally {
      setLoading(false);
    }
  }

  async function copy() {
    try {
      await navigator.clipboard.writeText(link);
      setCopied(true);
    } catch {
      // No clipboard (plain http, or refused): select the link so it can be copied by hand.
      linkRef.current?.select();
    }
  }

  return (
    <Modal title="Create Channel" labelledBy="create-channel-title">
      <form
        className="create-channel"
        onSubmit={submit}
        onKeyDown={(e) => e.key === "Escape" && close()}
        noValidate
      >
        <fieldset disabled={loading || !!link}>
          <label className="field">
            <span>Channel Name</span>
            <input
              ref={nameRef}
              name="name"
              value={name}
              required
              maxLength={Limits.channelNameMax}
              autoComplete="off"
              onChange={(e) => setName(e.target.value)}
            />
          </label>
          <label className="field">
            <span>Description (Optional)</span>
            <textarea
              name="description"
              rows={2}
              value={description}
              maxLength={Limits.descriptionMax}
              onChange={(e) => setDescription(e.target.value)}
            />
          </label>
          <fieldset className="field cc-types">
            <legend>Channel Type</legend>
            {TYPES.map(([value, label, hint]) => (
              <label key={value} className="cc-type">
                <input
                  type="radio"
                  name="type"
                  value={value}
                  checked={type === value}
                  onChange={() => setType(value)}
                />
                <span>
                  {label} <small>{hint}</small>
                </span>
              </label>
            ))}
          </fieldset>
        </fieldset>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : null}
        {link ? (
          <div className="field cc-link">
            <label htmlFor="cc-link">Channel Link</label>
            <div className="cc-copy">
              <input id="cc-link" ref={linkRef} readOnly value={link} onFocus={(e) => e.target.select()} />
              <button type="button" onClick={copy}>
                {copied ? "Copied!" : "Copy"}
              </button>
            </div>
            <p className="cc-note">Share this link with people you want to invite to the channel</p>
          </div>
        ) : null}
        <div className="actions">
          <button type="button" onClick={close}>
            {link ? "Close" : "Cancel"}
          </button>
          {link ? null : (
            <button type="submit" className="primary" disabled={!canCreate} aria-busy={loading}>
              {loading ? <span className="spinner-dot" aria-hidden="true" /> : null}
              Create
            </button>
          )}
        </div>
      </form>
    </Modal>
  );
}
