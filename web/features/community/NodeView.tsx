/** The node view (spec §2.1): a placeholder showing only the text NODE VIEW. */
export function NodeView() {
  return (
    <section className="node-view">
      <h1 className="glitch-title">NODE VIEW</h1>
    </section>
  );
}
