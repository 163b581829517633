//! The sandbox flags `cairn run` and `cairn acp` share: one definition, one meaning.

use std::path::PathBuf;

use clap::Args;

use crate::run::{SandboxArg, SandboxNetworkArg, ShellPolicyArg};

/// `--sandbox`, `--sandbox-writable`, `--sandbox-hide`, `--sandbox-network`,
/// `--allow-domain` and `--shell-policy`.
#[derive(Debug, Clone, Args)]
pub struct SandboxFlags {
    /// OS sandbox for shell commands: off, auto, required [default: $CAIRN_SANDBOX, else the
    /// sandbox settings, else auto: on wherever bubblewrap works].
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxArg>,
    /// A folder commands may write inside the sandbox besides the workspace (repeatable).
    #[arg(long = "sandbox-writable", value_name = "DIR")]
    pub sandbox_writable: Vec<PathBuf>,
    /// A path commands cannot read inside the sandbox, besides the built-in credential list
    /// (repeatable).
    #[arg(long = "sandbox-hide", value_name = "PATH")]
    pub sandbox_hide: Vec<PathBuf>,
    /// The network of sandboxed commands: proxy (only through Cairn's proxy, which asks
    /// about hosts no rule allows), none (a namespace of their own with only loopback) or
    /// open (the desktop's) [default: the sandbox settings, else proxy].
    #[arg(long = "sandbox-network", value_enum, value_name = "NET")]
    pub sandbox_network: Option<SandboxNetworkArg>,
    /// A host sandboxed commands reach without asking (`example.com`, `*.example.com`;
    /// repeatable), besides the download-only defaults and the `Network(...)` rules.
    #[arg(long = "allow-domain", value_name = "HOST")]
    pub allow_domain: Vec<String>,
    /// When shell commands run unasked: approve, sandbox, workspace, all
    /// [default: $CAIRN_SHELL_POLICY, else approve].
    #[arg(long, value_enum, value_name = "POLICY")]
    pub shell_policy: Option<ShellPolicyArg>,
}

impl SandboxFlags {
    /// Sets what these flags decide in `options`.
    pub fn apply(&self, options: &mut cairn_runtime::RunOptions) {
        options.sandbox = self.sandbox.map(Into::into);
        options.sandbox_writable = self.sandbox_writable.clone();
        options.sandbox_hidden = self.sandbox_hide.clone();
        options.sandbox_network = self.sandbox_network.map(Into::into);
        options.allow_domains = self.allow_domain.clone();
        options.shell_policy = self.shell_policy.map(Into::into);
    }
}
