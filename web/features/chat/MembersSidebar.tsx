/** Placeholder: being built. */
export function MembersSidebar(_: { channelId: string; mobile: boolean }) {
  return <div className="todo">MembersSidebar</div>;
}
