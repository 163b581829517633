import type { ReactNode } from "react";
import type { TodoItem } from "../bindings/TodoItem";
import { useT } from "../i18n";
import type { Item } from "../transcript";
import { PlanCard, type Answerers } from "./Interactions";

const marks = { pending: "○", in_progress: "◐", completed: "●" } as const;

/** Todo list, the latest proposed plan and further sections (`children`), beside the chat. */
export function SidePanel({
  drawer = false,
  todos,
  plan,
  answerPlan,
  children,
}: {
  /** Shown over the chat (a narrow window) rather than beside it. */
  drawer?: boolean;
  todos: TodoItem[];
  plan: Extract<Item, { kind: "plan" }> | null;
  answerPlan: Answerers["plan"];
  children?: ReactNode;
}) {
  const t = useT();
  const done = todos.filter((x) => x.status === "completed").length;
  return (
    <aside className={`side-panel ${drawer ? "drawer drawer-right" : ""}`} aria-label={t("todos.title")} data-testid="side-panel">
      <section className="panel-section" data-testid="todo-panel">
        <h2 className="sidebar-title">
          {t("todos.title")} {todos.length > 0 && <span className="count">{done}/{todos.length}</span>}
        </h2>
        {todos.length === 0 ? (
          <p className="sidebar-empty">{t("todos.empty")}</p>
        ) : (
          <ul className="todo-list">
            {todos.map((todo, i) => (
              <li key={i} className={`todo todo-${todo.status}`} data-testid="todo-item" data-status={todo.status}>
                <span className="todo-mark" aria-hidden="true">{marks[todo.status]}</span>
                <span>{todo.content}</span>
              </li>
            ))}
          </ul>
        )}
      </section>
      {plan !== null && (
        <section className="panel-section" data-testid="plan-panel">
          <PlanCard item={plan} answer={answerPlan} compact />
        </section>
      )}
      {children}
    </aside>
  );
}
