import type { ReactNode } from "react";
import { CommunityHome } from "../../web/features/community/CommunityHome.tsx";
import { communityView } from "../../web/features/community/routes.ts";
import { SphereIsland, type SphereProps } from "../../web/features/community/SphereIsland.tsx";
import { Islands, propsId, serializeProps } from "../../web/islands.ts";

export interface CommunityPage {
  status: number;
  entry: "community" | null;
  bodyClass?: string;
  title: string;
  body: ReactNode;
}

/**
 * The community area's pages (spec §2.1; docs/decisions/community-routes.md), or null when `path`
 * (no trailing slash) is not one. Called after every named route has had its turn.
 */
export function communityPage(path: string): CommunityPage | null {
  const view = communityView(path);
  if (!view) return null;
  if (view.view === "home")
    return {
      status: 200,
      entry: null,
      bodyClass: "theme-black",
      title: "wsync — community",
      body: <CommunityHome />,
    };
  const props: SphereProps = view;
  return {
    status: 200,
    entry: "community",
    bodyClass: "theme-black",
    title: view.view === "forest" ? "wsync — forest" : "wsync — node",
    body: (
      <>
        <div id={Islands.community}>
          <SphereIsland {...props} />
        </div>
        <script
          type="application/json"
          id={propsId("community")}
          // biome-ignore lint/security/noDangerouslySetInnerHtml: JSON data block, escaped by serializeProps; never executed.
          dangerouslySetInnerHTML={{ __html: serializeProps(props) }}
        />
      </>
    ),
  };
}
