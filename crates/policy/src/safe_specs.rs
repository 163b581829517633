//! Option tables of the known-safe programs: which short and long options take a value,
//! and whether that value is text (a pattern, a delimiter, a format) or may be a file. Used by
//! [`crate::safe_args`] to skip what is certainly not a file name.

/// What a program's options look like, for finding the words that are not file names.
pub(crate) struct Spec {
    /// Short options without a value.
    pub(crate) flags: &'static str,
    /// Short options whose (attached or next) value is text, never a file.
    pub(crate) text: &'static str,
    /// Short options whose value may be a file.
    pub(crate) value: &'static str,
    /// Short options with an optional value, attached only (`-M50%`): text.
    pub(crate) opt_text: &'static str,
    /// Long options without a value (or with an optional `=value`).
    pub(crate) long_flags: &'static [&'static str],
    /// Long options with a required value (`--opt VALUE` or `--opt=VALUE`) that is text.
    pub(crate) long_text: &'static [&'static str],
    /// Long options whose `=value` is text (the bare form is a flag only if in `long_flags`).
    pub(crate) long_eq_text: &'static [&'static str],
    /// Long options whose value may be a file.
    pub(crate) long_value: &'static [&'static str],
    /// Short options that give the pattern, so no operand is one.
    pub(crate) pattern_short: &'static str,
    /// Long options that give the pattern.
    pub(crate) pattern_long: &'static [&'static str],
    /// Whether the first operand is the pattern (grep, rg, git grep).
    pub(crate) pattern_operand: bool,
}

/// No known options: nothing is exempt.
pub(crate) const EMPTY: Spec = Spec {
    flags: "",
    text: "",
    value: "",
    opt_text: "",
    long_flags: &[],
    long_text: &[],
    long_eq_text: &[],
    long_value: &[],
    pattern_short: "",
    pattern_long: &[],
    pattern_operand: false,
};

const GREP: Spec = Spec {
    flags: "abcEFGHhiIlLnoqrRsTUuvVwxyzZP0123456789",
    text: "eABCmdD",
    value: "f",
    long_flags: &[
        "extended-regexp",
        "fixed-strings",
        "basic-regexp",
        "perl-regexp",
        "ignore-case",
        "no-ignore-case",
        "word-regexp",
        "line-regexp",
        "null-data",
        "no-messages",
        "invert-match",
        "byte-offset",
        "line-number",
        "no-line-number",
        "line-buffered",
        "with-filename",
        "no-filename",
        "only-matching",
        "quiet",
        "silent",
        "text",
        "recursive",
        "files-with-matches",
        "files-without-match",
        "count",
        "initial-tab",
        "null",
        "color",
        "colour",
        "no-group-separator",
    ],
    long_text: &[
        "regexp",
        "after-context",
        "before-context",
        "context",
        "max-count",
        "label",
        "include",
        "exclude",
        "exclude-dir",
        "binary-files",
        "devices",
        "directories",
        "group-separator",
    ],
    long_eq_text: &["color", "colour"],
    long_value: &["file", "exclude-from"],
    pattern_short: "ef",
    pattern_long: &["regexp", "file"],
    pattern_operand: true,
    ..EMPTY
};

const RG: Spec = Spec {
    flags: "abcFhHiIlLnNopPqsSuUvVwxz0.",
    text: "ABCeEgjmMrtTd",
    value: "f",
    long_flags: &[
        "ignore-case",
        "smart-case",
        "case-sensitive",
        "fixed-strings",
        "word-regexp",
        "line-regexp",
        "line-number",
        "no-line-number",
        "hidden",
        "no-ignore",
        "no-ignore-vcs",
        "files-with-matches",
        "files-without-match",
        "count",
        "count-matches",
        "only-matching",
        "invert-match",
        "multiline",
        "pcre2",
        "json",
        "vimgrep",
        "heading",
        "no-heading",
        "with-filename",
        "no-filename",
        "text",
        "null",
        "trim",
        "column",
        "no-messages",
        "stats",
        "unrestricted",
        "files",
    ],
    long_text: &[
        "regexp",
        "glob",
        "iglob",
        "type",
        "type-not",
        "max-count",
        "max-depth",
        "context",
        "after-context",
        "before-context",
        "replace",
        "threads",
        "max-filesize",
        "encoding",
        "engine",
        "sort",
        "sortr",
        "color",
        "colors",
        "max-columns",
    ],
    long_value: &["file", "ignore-file"],
    pattern_short: "ef",
    // `--files` lists files: every operand is a path.
    pattern_long: &["regexp", "file", "files", "type-list"],
    pattern_operand: true,
    ..EMPTY
};

const GIT_GREP: Spec = Spec {
    flags: "aiIwvhHEGFPnlLzcopWqr0123456789",
    text: "ABCem",
    value: "f",
    long_flags: &[
        "cached",
        "untracked",
        "no-index",
        "exclude-standard",
        "no-exclude-standard",
        "recurse-submodules",
        "text",
        "ignore-case",
        "word-regexp",
        "invert-match",
        "full-name",
        "extended-regexp",
        "basic-regexp",
        "perl-regexp",
        "fixed-strings",
        "line-number",
        "column",
        "files-with-matches",
        "name-only",
        "files-without-match",
        "null",
        "only-matching",
        "count",
        "color",
        "no-color",
        "break",
        "heading",
        "show-function",
        "function-context",
        "and",
        "or",
        "not",
        "all-match",
        "quiet",
    ],
    long_text: &[
        "context",
        "after-context",
        "before-context",
        "max-depth",
        "max-count",
        "threads",
    ],
    long_eq_text: &["color"],
    pattern_short: "ef",
    pattern_operand: true,
    ..EMPTY
};

/// `git log`, `show` and `diff`: the search and format options.
const GIT_LOG: Spec = Spec {
    flags: "psuRaz",
    text: "nSG",
    opt_text: "MCBl",
    long_flags: &[
        "oneline",
        "stat",
        "shortstat",
        "numstat",
        "name-only",
        "name-status",
        "graph",
        "all",
        "decorate",
        "no-decorate",
        "reverse",
        "follow",
        "first-parent",
        "merges",
        "no-merges",
        "patch",
        "no-patch",
        "abbrev-commit",
        "cached",
        "staged",
        "color",
        "no-color",
        "regexp-ignore-case",
        "all-match",
        "invert-grep",
        "pickaxe-regex",
        "pickaxe-all",
        "abbrev",
        "pretty",
    ],
    long_text: &[
        "grep",
        "author",
        "committer",
        "since",
        "after",
        "until",
        "before",
        "max-count",
        "skip",
    ],
    long_eq_text: &["format", "pretty", "date", "decorate", "color", "abbrev"],
    ..EMPTY
};

const CUT: Spec = Spec {
    flags: "nsz",
    text: "bcdf",
    long_flags: &["complement", "only-delimited", "zero-terminated"],
    long_text: &[
        "bytes",
        "characters",
        "fields",
        "delimiter",
        "output-delimiter",
    ],
    ..EMPTY
};

const SORT: Spec = Spec {
    flags: "bdfgiMhnRrVcCmsuz",
    text: "tkS",
    value: "T",
    long_flags: &[
        "ignore-leading-blanks",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "reverse",
        "version-sort",
        "merge",
        "stable",
        "unique",
        "zero-terminated",
    ],
    long_text: &[
        "field-separator",
        "key",
        "buffer-size",
        "parallel",
        "batch-size",
        "sort",
    ],
    long_value: &["temporary-directory", "random-source"],
    ..EMPTY
};

const LS: Spec = Spec {
    flags: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    text: "IwT",
    long_text: &[
        "ignore",
        "hide",
        "time-style",
        "format",
        "sort",
        "width",
        "tabsize",
        "quoting-style",
        "indicator-style",
        "block-size",
        "time",
    ],
    long_eq_text: &["color"],
    ..EMPTY
};

const HEAD_TAIL: Spec = Spec {
    flags: "qvzfF",
    text: "ncs",
    long_text: &["lines", "bytes", "sleep-interval"],
    ..EMPTY
};

const NL: Spec = Spec {
    flags: "p",
    text: "bdfhilnsvw",
    ..EMPTY
};

const STAT: Spec = Spec {
    flags: "LfZt",
    text: "c",
    long_text: &["format", "printf"],
    ..EMPTY
};

const DATE: Spec = Spec {
    flags: "uR",
    text: "d",
    value: "fr",
    long_text: &["date"],
    long_value: &["file", "reference"],
    ..EMPTY
};

const DU: Spec = Spec {
    flags: "0abDHhklLmPsSx",
    text: "dBt",
    value: "X",
    long_text: &[
        "max-depth",
        "block-size",
        "threshold",
        "exclude",
        "time-style",
    ],
    long_value: &["exclude-from"],
    ..EMPTY
};

const DIFF: Spec = Spec {
    flags: "abBcdeEfilnNpqrstTuwyZ",
    text: "UCWIFx",
    value: "XS",
    long_text: &[
        "label",
        "ignore-matching-lines",
        "show-function-line",
        "exclude",
        "width",
        "tabsize",
    ],
    long_flags: &["unified", "context"],
    long_eq_text: &["unified", "context"],
    long_value: &["exclude-from", "from-file", "to-file", "starting-file"],
    ..EMPTY
};

/// The option table for `words`' program and the arguments it applies to (after the
/// subcommand for `git <sub>`).
pub(crate) fn spec_for(words: &[String]) -> (&'static Spec, &[String]) {
    let Some(program) = words.first() else {
        return (&EMPTY, words);
    };
    let args = &words[1..];
    match program.as_str() {
        "grep" | "egrep" | "fgrep" => (&GREP, args),
        "rg" => (&RG, args),
        "cut" => (&CUT, args),
        "sort" => (&SORT, args),
        "ls" => (&LS, args),
        "head" | "tail" => (&HEAD_TAIL, args),
        "nl" => (&NL, args),
        "stat" => (&STAT, args),
        "date" => (&DATE, args),
        "du" => (&DU, args),
        "diff" => (&DIFF, args),
        "git" => match args.first().map(String::as_str) {
            Some("grep") => (&GIT_GREP, &args[1..]),
            // Not `blame` (`-S FILE`) nor `shortlog` (`-n` is a flag there).
            Some("log" | "show" | "diff") => (&GIT_LOG, &args[1..]),
            _ => (&EMPTY, args),
        },
        _ => (&EMPTY, args),
    }
}

/// find's predicates whose argument is a name pattern, format or number, never a file.
pub(crate) const FIND_TEXT: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-printf",
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-perm",
    "-size",
    "-maxdepth",
    "-mindepth",
];
