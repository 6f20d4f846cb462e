//! `cachescope completions SHELL` and `cachescope man [-o DIR]`: generated from the clap
//! definition, so they never disagree with `--help`.

use crate::args::heading;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use clap::CommandFactory;

use crate::args::Cli;
use crate::output;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write cachescope.1 and one page per subcommand into this directory (created if
    /// needed) instead of printing cachescope.1.
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "cachescope", &mut out);
    output::print(&String::from_utf8(out).context("completion script is not UTF-8")?)
}

pub fn man(args: ManArgs) -> Result<()> {
    let cmd = Cli::command();
    let Some(dir) = args.output else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&out)?;
        return Ok(stdout.flush()?);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // cachescope.1, then cachescope-SUB.1 for each subcommand.
    let mut pages = vec![("cachescope".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        pages.push((format!("cachescope-{}", sub.get_name()), sub.clone()));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut out = Vec::new();
        clap_mangen::Man::new(page)
            .title(name.to_uppercase())
            .render(&mut out)?;
        let (pending, mut file) = output::Pending::create(&path)?;
        file.write_all(&out)
            .with_context(|| format!("writing {}", path.display()))?;
        pending.commit()?;
    }
    Ok(())
}
