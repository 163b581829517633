// Typed wrappers around Cairn's Tauri commands. Every wire type comes from the generated
// bindings in ./bindings (protocol types) and ./bindings/app (the app's own types); never
// declare one by hand.
import { Channel, invoke } from "@tauri-apps/api/core";
import type { BudgetLimit } from "./bindings/app/BudgetLimit";
import type { BudgetView } from "./bindings/app/BudgetView";
import type { CardRect } from "./bindings/app/CardRect";
import type { CheckRow } from "./bindings/app/CheckRow";
import type { EndpointCheck } from "./bindings/app/EndpointCheck";
import type { VaultView } from "./bindings/app/VaultView";
import type { ApprovalDecision } from "./bindings/ApprovalDecision";
import type { DirectoryGrant } from "./bindings/DirectoryGrant";
import type { ElicitationAnswer } from "./bindings/ElicitationAnswer";
import type { Event } from "./bindings/Event";
import type { Mode } from "./bindings/Mode";
import type { PlanReview } from "./bindings/PlanReview";
import type { UserAnswer } from "./bindings/UserAnswer";
import type { AppInfo } from "./bindings/app/AppInfo";
import type { HistoryPage } from "./bindings/app/HistoryPage";
import type { SessionSearch } from "./bindings/app/SessionSearch";
import type { BoardView } from "./bindings/app/BoardView";
import type { Bootstrap } from "./bindings/app/Bootstrap";
import type { DirListing } from "./bindings/app/DirListing";
import type { FileIndex } from "./bindings/app/FileIndex";
import type { FilesEvent } from "./bindings/app/FilesEvent";
import type { ErrorCode } from "./bindings/app/ErrorCode";
import type { IpcError } from "./bindings/app/IpcError";
import type { ProblemAction } from "./bindings/app/ProblemAction";
import type { ImageUpload } from "./bindings/app/ImageUpload";
import type { WatchStatus } from "./bindings/app/WatchStatus";
import type { PermissionRules } from "./bindings/app/PermissionRules";
import type { RecentWorkspace } from "./bindings/app/RecentWorkspace";
import type { RestoreRequest } from "./bindings/app/RestoreRequest";
import type { RestoreView } from "./bindings/app/RestoreView";
import type { RewindView } from "./bindings/app/RewindView";
import type { TerminalTab } from "./bindings/app/TerminalTab";
import type { TimelineView } from "./bindings/app/TimelineView";
import type { RunOutcome } from "./bindings/app/RunOutcome";
import type { SessionStatus } from "./bindings/app/SessionStatus";
import type { SessionView } from "./bindings/app/SessionView";
import type { SettingsUpdate } from "./bindings/app/SettingsUpdate";
import type { SettingsView } from "./bindings/app/SettingsView";
import type { UsageReport } from "./bindings/app/UsageReport";
import type { WorkspaceView } from "./bindings/app/WorkspaceView";
import type { ApplyView } from "./bindings/app/ApplyView";
import type { CommitView } from "./bindings/app/CommitView";
import type { RemovalView } from "./bindings/app/RemovalView";
import type { ReviewComment } from "./bindings/app/ReviewComment";
import type { ReviewView } from "./bindings/app/ReviewView";
import type { Progress } from "./bindings/Progress";
import type { CommandView } from "./bindings/app/CommandView";
import type { ExtensionsView } from "./bindings/app/ExtensionsView";
import type { WorktreeDiskView } from "./bindings/app/WorktreeDiskView";
import type { HandoffView } from "./bindings/app/HandoffView";
import type { UpdateView } from "./bindings/app/UpdateView";

/** How a run ended: its turns (the last one's status), `not_started`, `channel_closed`, or a slash command done without a turn. */
export type RunEnd = RunOutcome;

/** The app's name, version and protocol version. */
export const appInfo = () => invoke<AppInfo>("app_info");
/** Everything the page needs at start. */
export const bootstrap = () => invoke<Bootstrap>("bootstrap");
/** A start-up benchmark mark (only with CAIRN_BENCH=1). */
export const benchMark = (mark: string, data: unknown) => invoke<unknown>("bench_mark", { mark, data });

/** Shows the native folder picker. */
export const pickFolder = () => invoke<string | null>("pick_folder");
/** Opens a folder as this window's workspace. */
export const openWorkspace = (path: string) => invoke<WorkspaceView>("open_workspace", { path });
/** Closes the workspace (back to the welcome screen). */
export const closeWorkspace = () => invoke<RecentWorkspace[]>("close_workspace");
/** Removes a folder from the recent list. */
export const forgetWorkspace = (path: string) => invoke<RecentWorkspace[]>("forget_workspace", { path });
/** The workspace's sessions. */
export const listSessions = () => invoke<WorkspaceView>("list_sessions");

/** Starts a new session in the workspace. */
export const newSession = () => invoke<SessionView>("new_session");
/** Resumes a saved session. */
export const openSession = (id: string) => invoke<SessionView>("open_session", { id });
/** The live state of the window's session. */
export const sessionStatus = () => invoke<SessionStatus>("session_status");
/** The page of the shown session's history ending before turn group `before`. */
export const sessionHistory = (before: number, limit?: number) =>
  invoke<HistoryPage>("session_history", { before, limit: limit ?? null });
/** The page of the shown session's history starting at turn group `from` (0: the first turn). */
export const sessionHistoryFrom = (from: number, limit?: number) =>
  invoke<HistoryPage>("session_history_from", { from, limit: limit ?? null });
/** The page of the shown session's history around chat turn `turn`; null: no such turn. */
export const sessionHistoryAtTurn = (turn: number, limit?: number) =>
  invoke<HistoryPage | null>("session_history_at_turn", { turn, limit: limit ?? null });
/** Searches the shown session's whole log (prompts and answers, case-insensitive). */
export const searchSession = (query: string) => invoke<SessionSearch>("search_session", { query });
/** Renames a session. */
export const renameSession = (id: string, name: string) => invoke<void>("rename_session", { id, name });
/** Deletes a session. */
export const deleteSession = (id: string) => invoke<void>("delete_session", { id });
/**
 * Streams the window's sessions board (every session of the workspace with its live state)
 * to `onBoard`: now, then on every change. Resolves when a newer watch replaced this one.
 */
export function watchBoard(onBoard: (board: BoardView) => void) {
  const channel = new Channel<BoardView>();
  channel.onmessage = onBoard;
  return invoke<void>("watch_board", { onBoard: channel });
}

/**
 * Creates git worktree `name` (or reuses it), with the folder's uncommitted changes when
 * `carry`, and starts a session there; a creation over a second reports to `onProgress`.
 */
export function newWorktreeSession(name: string, carry: boolean, onProgress: (p: Progress) => void) {
  const channel = new Channel<Progress>();
  channel.onmessage = onProgress;
  return invoke<SessionView>("new_worktree_session", { name, carry, onProgress: channel });
}
/** A worktree's whole diff against its base, file by file. */
export const worktreeReview = (name: string) => invoke<ReviewView>("worktree_review", { name });
/** The one message inline review comments become (`null` when none says anything). */
export const reviewMessage = (comments: ReviewComment[]) => invoke<string | null>("review_message", { comments });
/**
 * Applies a worktree to the folder as a change-turn of a folder chat (undoable there): the one
 * shown, else the worktree's own. Conflicting paths of `keep` keep the folder's version, those
 * of `take` get the worktree's.
 */
export const applyWorktree = (name: string, dryRun: boolean, keep: string[] = [], take: string[] = []) =>
  invoke<ApplyView>("apply_worktree", { name, dryRun, keep, take });
/** A commit message for a worktree's changes proposed by the model (`null`: none). */
export const proposeCommit = (name: string) => invoke<string | null>("propose_commit", { name });
/** Commits a worktree's changes on its branch. */
export const commitWorktree = (name: string, message: string) => invoke<CommitView>("commit_worktree", { name, message });
/** Removes a worktree (refused with code `refused` while it holds unapplied work, unless `force`). */
export const removeWorktree = (name: string, force: boolean) => invoke<RemovalView>("remove_worktree", { name, force });

function channelFor(onEvent: (event: Event) => void): Channel<Event> {
  const channel = new Channel<Event>();
  channel.onmessage = onEvent;
  return channel;
}

/**
 * Runs a turn; every protocol event is handed to `onEvent` in order. Files the text mentions
 * (`@path`) and `images` go with it; a bad one rejects before the turn starts.
 */
export const runTurn = (text: string, onEvent: (event: Event) => void, images: ImageUpload[] = []) =>
  invoke<RunEnd>("run_turn", { text, images, onEvent: channelFor(onEvent) });
/** Re-runs the last turn after a retriable error. */
export const retryTurn = (onEvent: (event: Event) => void) =>
  invoke<RunEnd>("retry_turn", { onEvent: channelFor(onEvent) });
/** Finishes the tool calls left open when Cairn stopped (approvals asked again). */
export const resumeTurn = (onEvent: (event: Event) => void) =>
  invoke<RunEnd>("resume_turn", { onEvent: channelFor(onEvent) });
/** The slash commands the composer completes. */
export const listCommands = () => invoke<CommandView[]>("list_commands");
/** Hooks, skills and commands of the window's workspace. */
export const getExtensions = () => invoke<ExtensionsView>("get_extensions");
/** Trusts the project's hook file as it is now. */
export const trustProjectHooks = () => invoke<ExtensionsView>("trust_project_hooks");
export const enableClaudeUserFiles = () => invoke<ExtensionsView>("enable_claude_user_files");
/** Settings → Diagnostics: the checks of `cairn doctor`, one typed row each. */
export const runDiagnostics = (offline: boolean) => invoke<CheckRow[]>("run_diagnostics", { offline });
/** What this repository's worktrees take on disk, and the budget. */
export const worktreeDisk = () => invoke<WorktreeDiskView>("worktree_disk");
/** Sets the worktrees' disk budget (GB) for every face. */
export const setWorktreeBudget = (gb: number) => invoke<WorktreeDiskView>("set_worktree_budget", { gb });
/** Brings the folder's HEAD into worktree `name` (merge, or rebase). */
export const updateWorktree = (name: string, rebase: boolean) => invoke<UpdateView>("update_worktree", { name, rebase });
/** Hands session `id` over with its history: into worktree `to`, or back to the folder (null). */
export const handoffSession = (id: string, to: string | null) => invoke<HandoffView>("handoff_session", { id, to });
/** Interrupts the running turn. */
export const interrupt = () => invoke<void>("interrupt");
/** Queues steering for the running turn. */
export const queueSteering = (text: string, images: ImageUpload[] = []) => invoke<string[]>("queue_steering", { text, images });
/** Withdraws queued steering; false when it was already injected. */
export const removeSteering = (text: string) => invoke<boolean>("remove_steering", { text });
/** The shown session's spending cap and what it spent. */
export const sessionBudget = () => invoke<BudgetView>("session_budget");
/** Sets the shown session's spending cap from its next request on. */
/** Counts the shown session against batch `batch`'s shared cap (`limit` makes it with its first member). */
export const joinSpendBatch = (batch: string, limit: BudgetLimit) => invoke<BudgetView>("join_spend_batch", { batch, limit });
export const setBudget = (limit: BudgetLimit) => invoke<BudgetView>("set_budget", { limit });
/** Changes the permission mode. */
export const setMode = (mode: Mode) => invoke<void>("set_mode", { mode });

/** Answers an approval from the chat. */
export const answerApproval = (reqId: string, decision: ApprovalDecision) =>
  invoke<boolean>("answer_approval", { reqId, decision });
/** "Always allow in this project": keeps the approval's allowance as a user-level rule of
 * this project and answers it; false when it was already answered. */
export const allowInProject = (reqId: string) => invoke<boolean>("allow_in_project", { reqId });
/** Where the awaiting approval's card is in the page (`null`: none waits), so the native
 * dialog is placed clear of it. */
export const approvalCardAt = (card: CardRect | null) => invoke<void>("approval_card_at", { card });
/** Answers the agent's question. */
/** A request id to answer by (`null` for requests logged before ids existed: the oldest). */
const byId = (requestId: string) => (requestId === "" ? null : requestId);
export const answerQuestion = (answer: UserAnswer, requestId: string) =>
  invoke<boolean>("answer_question", { answer, requestId: byId(requestId) });
/** Accepts or rejects the proposed plan. */
export const answerPlan = (review: PlanReview, requestId: string) =>
  invoke<boolean>("answer_plan", { review, requestId: byId(requestId) });
/** Grants or denies a directory request. */
export const answerDirectory = (grant: DirectoryGrant, requestId: string) =>
  invoke<boolean>("answer_directory", { grant, requestId: byId(requestId) });
/** Answers an MCP server's form or page; an accepted page (`openUrl`) opens in the browser. */
export const answerElicitation = (answer: ElicitationAnswer, requestId: string, openUrl: string | null) =>
  invoke<boolean>("answer_elicitation", { answer, requestId, openUrl });
/** A diff of what a pending file edit would change. */
export const editPreview = (reqId: string) => invoke<string | null>("edit_preview", { reqId });
/** The full result of a tool call. */
export const toolResult = (callId: string) => invoke<string | null>("tool_result", { callId });
/** The session's permission allowances. */
export const permissionRules = () => invoke<PermissionRules>("permission_rules");
/** Revokes a tool's session allowance. */
export const revokeTool = (name: string) => invoke<PermissionRules>("revoke_tool", { name });
/** Revokes a command's session allowance. */
export const revokeCommand = (program: string) => invoke<PermissionRules>("revoke_command", { program });
/** Removes a rule from the user permissions file: the global one, or with `project` (a
 * listed rule's) the one limited to that project. */
export const revokeRule = (text: string, project: string | null = null) =>
  invoke<PermissionRules>("revoke_rule", { text, project });

/** The current settings. */
export const getSettings = () => invoke<SettingsView>("get_settings");
/** Saves the settings. */
export const saveSettings = (update: SettingsUpdate) => invoke<SettingsView>("save_settings", { update });
/** Sets one setting, as `cairn config set` does (a secret goes to the OS keyring). */
export const setSetting = (key: string, value: string) => invoke<SettingsView>("set_setting", { key, value });
/** Removes one setting (back to its default), as `cairn config unset` does. */
export const unsetSetting = (key: string) => invoke<SettingsView>("unset_setting", { key });
/** The vault's entries (never their values). */
export const vaultList = () => invoke<VaultView>("vault_list");
/** Sets a vault entry for some roles (none = every role). */
export const vaultSet = (name: string, value: string, roles: string[]) => invoke<VaultView>("vault_set", { name, value, roles });
/** Removes a vault entry. */
export const vaultRemove = (name: string) => invoke<VaultView>("vault_remove", { name });
/** Stores an API key in the OS keyring. */
export const setApiKey = (provider: string, key: string) => invoke<SettingsView>("set_api_key", { provider, key });
/** Removes an API key from the OS keyring. */
export const removeApiKey = (provider: string) => invoke<SettingsView>("remove_api_key", { provider });
/** Trusts a project MCP server as defined now (it starts with the next chat). */
export const trustMcpServer = (name: string) => invoke<SettingsView>("trust_mcp_server", { name });
/** Logs in to an HTTP MCP server that needs one (the system browser), then reconnects it. */
export const connectMcpServer = (name: string) => invoke<SettingsView>("connect_mcp_server", { name });
/** The usage center's report. */
export const usageReport = () => invoke<UsageReport>("usage_report");
export const checkEndpoint = (provider: string, baseUrl: string, key: string | null) =>
  invoke<EndpointCheck>("check_endpoint", { provider, baseUrl, key });

/** The session's checkpoints and its changes since it started. */
export const sessionTimeline = () => invoke<TimelineView>("session_timeline");
/** The unified diff of a checkpoint (0 = everything since the session started). */
export const checkpointDiff = (turn: number, paths: string[]) => invoke<string>("checkpoint_diff", { turn, paths });
/** Restores (or with `dryRun`, plans restoring) the workspace or chosen files to a checkpoint. */
export const restoreCheckpoint = (request: RestoreRequest) => invoke<RestoreView>("restore_checkpoint", { request });
/** Rewinds the conversation to right after session turn `turn` (later turns leave the history). */
export const rewindConversation = (turn: number) => invoke<RewindView>("rewind_conversation", { turn });

/** Opens a new window with its own workspace and session (File → New Window). */
export const newWindow = () => invoke<string>("new_window");

/** The terminal panel's tabs: the workspace's terminals and the agent's command sessions. */
export const terminalList = () => invoke<TerminalTab[]>("terminal_list");
/** Opens the user's shell in the workspace (with `worktree`, in that worktree's counterpart). */
export const terminalOpen = (cols: number, rows: number, worktree: string | null = null) =>
  invoke<TerminalTab>("terminal_open", { cols, rows, worktree });
/** Streams a terminal's output (what it printed so far, then live) to `onOutput`. */
export function terminalAttach(id: string, onOutput: (bytes: Uint8Array) => void) {
  const channel = new Channel<number[]>();
  channel.onmessage = (chunk) => onOutput(Uint8Array.from(chunk));
  return invoke<void>("terminal_attach", { id, onOutput: channel });
}
/** Types into a terminal or an agent command session. */
export const terminalWrite = (id: string, data: string) => invoke<void>("terminal_write", { id, data });
/**
 * A writer for terminal `id` that keeps keystrokes in order: one write is in flight at a time
 * and what is typed meanwhile goes in the next one. (Each invoke is its own request, and
 * requests may be served in any order: typing `echo` fast could reach the shell as `ehco`.)
 * A failed write is reported and what was queued behind it is dropped.
 */
export function terminalTypist(id: string, onError: (e: unknown) => void): (data: string) => void {
  let queued = "";
  let busy = false;
  const flush = () => {
    if (queued === "") {
      busy = false;
      return;
    }
    const data = queued;
    queued = "";
    busy = true;
    terminalWrite(id, data).then(flush, (e: unknown) => {
      queued = "";
      busy = false;
      onError(e);
    });
  };
  return (data: string) => {
    queued += data;
    if (!busy) flush();
  };
}
/** Resizes a terminal. */
export const terminalResize = (id: string, cols: number, rows: number) => invoke<void>("terminal_resize", { id, cols, rows });
/** The system clipboard's text (Cairn's own command; see commands/clipboard.rs). */
export const clipboardRead = () => invoke<string>("clipboard_read");
/** Puts text on the system clipboard. */
export const clipboardWrite = (text: string) => invoke<void>("clipboard_write", { text });
/** Closes one of the user's terminals. */
export const terminalClose = (id: string) => invoke<void>("terminal_close", { id });

/** A workspace folder's entries ("" = the root), ignored files left out; watched from now on. */
export const listDir = (path: string) => invoke<DirListing>("list_dir", { path });
/** Every file of the workspace, for `@path` completion. */
export const workspaceFiles = () => invoke<FileIndex>("workspace_files");
/** Starts this window's file watcher; its events go to `onEvent`. */
export function watchFiles(onEvent: (event: FilesEvent) => void) {
  const channel = new Channel<FilesEvent>();
  channel.onmessage = onEvent;
  return invoke<WatchStatus>("watch_files", { onEvent: channel });
}
/** Opens an http(s) address in the system browser (after the user confirmed it; nothing else is opened). */
export const openLink = (url: string) => invoke<void>("open_link", { url });
/** A stored image attachment of the window's session as a `data:` URL. */
export const readAttachment = (path: string) => invoke<string>("read_attachment", { path });

/** Whether `error` is a command's typed failure (a code and a message). */
export function isIpcError(error: unknown): error is IpcError {
  if (typeof error !== "object" || error === null) return false;
  const e = error as Record<string, unknown>;
  return typeof e.code === "string" && typeof e.message === "string";
}

/** The code of a command's failure (`null` for other failures). */
export function errorCode(error: unknown): ErrorCode | null {
  return isIpcError(error) ? error.code : null;
}

/** What a command's failure offers to do about it (`null`: nothing, or another failure). */
export function errorAction(error: unknown): ProblemAction | null {
  return isIpcError(error) ? (error.action ?? null) : null;
}

/** The folder a refusal offers to open instead (a refused git directory's work tree). */
export function openInsteadOf(error: unknown): string | null {
  return isIpcError(error) ? (error.openInstead ?? null) : null;
}

/** A readable message for an IPC failure: a command's message, or one of unknown shape. */
export function describeError(error: unknown): string {
  if (isIpcError(error)) return error.message;
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
