/** Placeholder: being built. */
export function MobileChrome() {
  return <div className="todo">MobileChrome</div>;
}
