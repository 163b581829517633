// ESLint for the UI: TypeScript-aware recommended rules plus the React hooks rules.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "src/bindings/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      // The classic hooks rules; the React Compiler rules of the plugin's recommended set
      // flag the "latest value in a ref" pattern this UI uses on purpose.
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // WebKitGTK leaves a native tooltip on screen when its element goes away under a still
      // pointer: hints are the page's own (`data-tip`, drawn by components/Tips.tsx).
      "no-restricted-syntax": [
        "error",
        {
          selector: "JSXOpeningElement[name.name=/^[a-z]/] > JSXAttribute[name.name='title']",
          message: "Use data-tip (components/Tips.tsx) instead of a native title tooltip.",
        },
      ],
    },
  },
);
