import { useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { Modal } from "../../components/Modal.tsx";
import { authState } from "../../state/auth.ts";
import { deleteAccount } from "../../state/auth-actions.ts";

export const DeleteAccountText = {
  title: "Delete your account?",
  what: (handle: string) =>
    `This deletes ${handle} on this server for good: its sessions, key backup, read markers and channel memberships. Your messages become "removed" tombstones for everyone; channels you own pass to their longest-standing member. It cannot be undone.`,
  continue: "Continue",
  confirmTitle: "Delete your account for good",
  confirmWhat: (handle: string) => `Type the password of ${handle} to delete it. This is the last question.`,
  confirmAtproto: (handle: string) =>
    `Type ${handle} to delete it. This is the last question. An account signed in with ATProto has no wsync password: a sign-in with ATProto from the last 10 minutes stands for it.`,
  password: "Password",
  handle: "Handle",
  delete: "Delete my account",
  deleting: "Deleting...",
  cancel: "Cancel",
} as const;
const T = DeleteAccountText;

/**
 * Self-service account deletion (issue 34): asked twice, the second time with the password, doing
 * what `wsync account delete` does (the same server route). The safe choice has the focus each time.
 */
export function DeleteAccountDialog({
  onCancel,
  onDeleted = () => window.location.assign("/login"),
}: {
  onCancel(): void;
  onDeleted?(): void;
}) {
  const auth = useSnapshot(authState);
  const handle = handleWithoutSuffix(auth.user?.handle ?? "this account");
  // An ATProto account has no wsync password: its handle is typed instead (the server also wants a
  // fresh ATProto sign-in).
  const atproto = auth.user?.atproto === true;
  const [step, setStep] = useState<"ask" | "confirm">("ask");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  if (step === "ask")
    return (
      <Modal title={T.title} labelledBy="delete-account-title" describedBy="delete-account-what" portal>
        <p id="delete-account-what" className="warning">
          {T.what(handle)}
        </p>
        <div className="actions">
          <button type="button" className="danger" onClick={() => setStep("confirm")}>
            {T.continue}
          </button>
          <button type="button" onClick={onCancel} data-autofocus>
            {T.cancel}
          </button>
        </div>
      </Modal>
    );

  const submit = async (e: { preventDefault(): void }) => {
    e.preventDefault();
    if (!password || busy) return;
    setBusy(true);
    setError(null);
    try {
      await deleteAccount(atproto ? { handle: password.trim() } : { password });
      onDeleted();
    } catch (err) {
      setError(err instanceof Error && err.message ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <Modal
      title={T.confirmTitle}
      labelledBy="delete-account-title"
      describedBy="delete-account-confirm"
      portal
    >
      <form onSubmit={submit}>
        <p id="delete-account-confirm">{atproto ? T.confirmAtproto(handle) : T.confirmWhat(handle)}</p>
        <label>
          {atproto ? T.handle : T.password}
          <input
            type={atproto ? "text" : "password"}
            name={atproto ? "delete-handle" : "delete-password"}
            autoComplete={atproto ? "off" : "current-password"}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            data-autofocus
          />
        </label>
        {error ? (
          <p className="warning" role="alert">
            {error}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" className="danger" disabled={busy || !password}>
            {busy ? T.deleting : T.delete}
          </button>
          <button type="button" disabled={busy} onClick={onCancel}>
            {T.cancel}
          </button>
        </div>
      </form>
    </Modal>
  );
}
