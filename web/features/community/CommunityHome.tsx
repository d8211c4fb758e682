import { DEMO_SPHERE } from "./routes.ts";

/**
 * COMMUNITY HOME (spec §2.1), the community side's placeholder screen at /community and under it.
 * Static markup, rendered on the server only; it leads into the placeholder FOREST.
 */
export function CommunityHome() {
  return (
    <main className="page-center community-home">
      <div className="panel">
        <h1 className="glitch-title">COMMUNITY HOME</h1>
        <p className="community-tagline">Where thoughts cast shadows</p>
        <p className="community-note">
          The community is a placeholder for now: its forest of nodes is sample data.
        </p>
        <nav className="community-links">
          <a href={`/${DEMO_SPHERE}`}>Enter the forest</a>
          <a href="/sync">Secure Communications</a>
        </nav>
      </div>
    </main>
  );
}
