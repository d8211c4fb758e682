import { useNavigate, useParams } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { Spinner } from "../../components/Spinner.tsx";
import { loadClient } from "../../state/engine.ts";
import { clearResume } from "../../state/resume.ts";

/**
 * /sync/join/{channelId}#{token} (protocol §3): the token is in the fragment, which the browser never
 * sends to the server, so it stays out of every access log. Joins, then opens the channel.
 */
export function JoinRoute() {
  const { channelId } = useParams({ from: "/sync/join/$channelId" });
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const token = window.location.hash.replace(/^#/, "");
    loadClient()
      .then((c) => c.join(token ? `${channelId}#${token}` : channelId))
      .then((view) => {
        clearResume(["join"]);
        return navigate({ to: "/sync/c/$channelId", params: { channelId: view.channel.id }, replace: true });
      })
      .catch((e) => {
        clearResume(["join"]);
        setError(e instanceof Error ? e.message : "Failed to join channel");
      });
  }, [channelId, navigate]);
  if (error) {
    return (
      <main className="page-center">
        <div className="panel">
          <p className="field-error">Failed to join channel: {error}</p>
          <a href="/sync">Back to the board</a>
        </div>
      </main>
    );
  }
  return <Spinner label="Joining channel" />;
}
