// Answers to what the shown session asks (approvals, questions, plans, folder grants, MCP
// forms): each sent by its request id, then its card marked answered.
import { useCallback, useMemo } from "react";
import type { ApprovalDecision } from "../bindings/ApprovalDecision";
import type { Action } from "../chats";
import type { Answerers } from "../components/Interactions";
import * as ipc from "../ipc";

/** The chat cards' answer actions. */
export type Answers = Answerers & {
  approve: (reqId: string, decision: ApprovalDecision) => void;
  /** "Always allow in this project": keeps the request's allowance as a project rule. */
  allowInProject: (reqId: string) => void;
};

/**
 * The answer actions of the shown session; `dispatch` marks its cards, `onPlanAccepted`
 * follows the engine out of plan mode.
 */
export function useAnswers(dispatch: (action: Action) => void, fail: (e: unknown) => void, onPlanAccepted: () => void): Answers {
  const answered = useCallback((id: string, state: "answered" | "rejected") => dispatch({ type: "answered", id, state }), [dispatch]);
  return useMemo(
    () => ({
      question: (item, answer) => ipc.answerQuestion(answer, item.requestId).then(() => answered(item.id, "answered"), fail),
      plan: (item, review) =>
        ipc.answerPlan(review, item.requestId).then(() => {
          answered(item.id, review.kind === "accepted" ? "answered" : "rejected");
          if (review.kind === "accepted") onPlanAccepted();
        }, fail),
      directory: (item, grant) => ipc.answerDirectory(grant, item.requestId).then(() => answered(item.id, "answered"), fail),
      elicitation: (item, answer, openUrl) => ipc.answerElicitation(answer, item.requestId, openUrl).then(() => answered(item.id, "answered"), fail),
      approve: (reqId, decision) => {
        ipc.answerApproval(reqId, decision).then(() => answered(reqId, "answered"), fail);
      },
      allowInProject: (reqId) => {
        ipc.allowInProject(reqId).then(() => answered(reqId, "answered"), fail);
      },
    }),
    [answered, fail, onPlanAccepted],
  );
}
