/** Placeholder: being built. */
export function NetworkOverview() {
  return <div className="todo">NetworkOverview</div>;
}
