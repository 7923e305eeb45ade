//! The `git-rutter` binary: parse the command line, run it, map the result to an exit status.
//! `git rutter capture` always exits 0, whatever its arguments (a hook never breaks a client).

use clap::Parser;

fn main() {
    let is_capture = std::env::args().nth(1).as_deref() == Some("capture");
    let cli = match rutter::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if is_capture => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("invalid arguments");
            eprintln!("[librarian-capture] {first}; nothing captured.");
            std::process::exit(0);
        }
        Err(e) => {
            let code = if e.use_stderr() {
                rutter::cli::EXIT_CANNOT_RUN
            } else {
                0
            };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    std::process::exit(rutter::cli::run(cli));
}
