//! The attribution's [`Options`] from `attribute`'s flags.

use cachescope::attribution::{CostModel, Options};

use super::AttributeArgs;

/// The attribution's options from the flags.
pub(super) fn options(args: &AttributeArgs, per_instruction: bool) -> Options {
    args.per_structure.options(Options {
        geometry: args.cache,
        sample_every: args.sample,
        seed: args.input.params.seed,
        cost: (!args.no_cost).then(|| CostModel {
            handler_lines: args.handler_lines,
            ..CostModel::default()
        }),
        mrc: !args.no_mrc,
        exe: args.exe.clone(),
        per_instruction,
        writebacks: args.writebacks,
        utilization: args.utilization || args.fields,
        fields: args.fields,
        ..Options::default()
    })
}
