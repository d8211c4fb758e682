/** Placeholder: being built. */
export function ChannelSidebar(_: { mobile: boolean }) {
  return <div className="todo">ChannelSidebar</div>;
}
