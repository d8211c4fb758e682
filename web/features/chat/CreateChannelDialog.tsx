/** Placeholder: being built. */
export function CreateChannelDialog() {
  return <div className="todo">CreateChannelDialog</div>;
}
