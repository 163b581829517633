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
