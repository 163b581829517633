//! Standard output for the listing commands: `cairn sessions | head -1` ends quietly when the
//! reader goes away, as Unix tools do, instead of panicking on the broken pipe.

use std::io::{ErrorKind, Write};

/// Writes to stdout; a closed stdout ends the process with success (nothing is left to say
/// to anyone), any other write failure is reported on stderr.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "error: cannot write to stdout: {e}");
    }
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes to stderr, ignoring failures: a closed stderr (`2>&1 | head`) must neither panic,
/// as `eprintln!` does, nor change the exit status.
pub(crate) fn write_err(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` through [`write_err`].
macro_rules! errln {
    () => {
        $crate::out::write_err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}
