/** Placeholder: being built. */
export function ChatView(_: { channelId: string; mobile: boolean }) {
  return <div className="todo">ChatView</div>;
}
