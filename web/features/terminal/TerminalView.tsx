/** Placeholder: being built. */
export function TerminalView() {
  return <div className="todo">TerminalView</div>;
}
