/** The session list (placeholder until sessions and workspaces arrive). */
export function Sidebar() {
  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="sidebar-section">
        <h2 className="sidebar-title">Workspace</h2>
        <p className="sidebar-empty">No folder open</p>
      </div>
      <div className="sidebar-section">
        <h2 className="sidebar-title">Sessions</h2>
        <ul className="session-list">
          <li className="session-item session-item-active" aria-current="true">
            <span className="session-name">Demo session</span>
            <span className="session-meta">engine not connected</span>
          </li>
        </ul>
      </div>
    </nav>
  );
}
