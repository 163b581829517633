import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import "./styles.css";

const root = document.getElementById("root");
if (root === null) {
  throw new Error("index.html has no #root element");
}
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// The first frame with the app's shell on screen (read by the start-up benchmark).
requestAnimationFrame(() =>
  requestAnimationFrame(() => {
    (window as unknown as { __cairnFirstPaint: number }).__cairnFirstPaint = performance.timeOrigin + performance.now();
  }),
);
