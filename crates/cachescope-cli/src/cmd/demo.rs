//! `cachescope demo`: the README's first command. Generates a built-in workload, writes its
//! report (as `cachescope report --workload` would) and prints where it is.

use anyhow::Result;
use cachescope::Source;
use cachescope::trace::Trace;
use cachescope::workloads;

use super::report::{collect_options, make, print_summary};
use crate::args::DemoArgs;

pub fn run(args: DemoArgs) -> Result<()> {
    let params = args.params.to_params(args.run.line_size);
    let generator = workloads::generator(args.workload, &params)?;
    let mut trace = Trace::from_reader(
        Box::new(generator),
        Source::Workload(args.workload.name().into()),
    );
    let options = collect_options(&args.report, &args.params, &args.run);
    let (report, written) = make(&mut trace, options, None, None, &args.output, &args.run)?;
    print_summary(&report, &written, args.json, args.csv)
}
