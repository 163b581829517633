import type { AppInfo } from "../bindings/app/AppInfo";
import { StoneMark } from "./StoneMark";

/** The app bar: product name, versions reported by the backend, and a load error if any. */
export function Header({ info, error }: { info: AppInfo | null; error: string | null }) {
  return (
    <header className="app-header">
      <div className="brand">
        <StoneMark />
        <span className="brand-name" data-testid="app-name">
          {info?.name ?? "Cairn"}
        </span>
        {info !== null && (
          <span className="version" data-testid="app-version" title={`protocol v${info.protocolVersion}`}>
            v{info.version}
          </span>
        )}
      </div>
      {error !== null ? (
        <span className="header-error" role="alert">
          Backend unavailable: {error}
        </span>
      ) : (
        <span className="status-pill" title="Replies come from a demo event stream until the engine is wired in">
          <span className="status-dot" aria-hidden="true" />
          Engine not connected
        </span>
      )}
    </header>
  );
}
