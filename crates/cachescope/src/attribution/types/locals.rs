//! Locals in their function's frame: an array or structure whose `DW_AT_location` is
//! `DW_OP_fbreg(offset)` in a function whose `DW_AT_frame_base` is `DW_OP_call_frame_cfa`
//! (what gcc and clang emit on x86-64) lives at `CFA + offset` in every frame of that
//! function. A trace's call events give each frame's CFA (the return address the call stored,
//! plus 8: [`crate::attribution::buckets`]), so these locals can be named and counted field
//! by field like globals. Scalars stay in the `stack` bucket (they are not structures); what
//! cannot be placed from the CFA alone (a location list, another frame base) is counted in
//! [`super::LocalsSkipped`] for a note.

use addr2line::gimli;
use gimli::Reader as _;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian, constants};

use super::{DataType, LocalVar, ModuleTypes};

type R<'a> = EndianSlice<'a, RunTimeEndian>;
type Entry<'a, 'u> = gimli::DebuggingInformationEntry<'u, 'u, R<'a>>;

/// A subprogram's frame, as its locals need it.
pub(super) struct Frame {
    name: String,
    /// Its link-time entry (`DW_AT_low_pc`); `None` without one (a declaration, an abstract
    /// instance).
    entry: Option<u64>,
    /// Its frame base is the CFA.
    cfa: bool,
}

/// The frame of subprogram `entry` named `name` (`None` without a name).
pub(super) fn frame(entry: &Entry<'_, '_>, name: Option<String>) -> Option<Frame> {
    let low = match entry.attr_value(constants::DW_AT_low_pc).ok()? {
        Some(AttributeValue::Addr(a)) => Some(a),
        _ => None,
    };
    let cfa = matches!(
        entry.attr_value(constants::DW_AT_frame_base),
        Ok(Some(AttributeValue::Exprloc(e))) if e.0.slice() == [constants::DW_OP_call_frame_cfa.0]
    );
    Some(Frame {
        name: name?,
        entry: low,
        cfa,
    })
}

/// Variable `entry` (`name`, of type `ty`, with no fixed address) of `frame`: kept when it is
/// an array or a structure at a CFA offset, counted as skipped when it is one elsewhere.
pub(super) fn local(
    entry: &Entry<'_, '_>,
    frame: Option<&Frame>,
    name: String,
    ty: DataType,
    out: &mut ModuleTypes,
) {
    if ty.dims.is_empty() && !ty.element.is_structure() {
        return;
    }
    let Some(Frame {
        name: function,
        entry: Some(at),
        cfa,
    }) = frame
    else {
        return;
    };
    match entry.attr_value(constants::DW_AT_location) {
        Ok(Some(AttributeValue::Exprloc(expr))) => {
            let Some(offset) = fbreg(expr.0) else {
                return; // In registers, or an expression this reading does not follow.
            };
            if !cfa {
                out.locals_skipped.frame_base += 1;
                return;
            }
            out.locals.push(LocalVar {
                function: function.clone(),
                entry: *at,
                name,
                offset,
                ty,
            });
        }
        Ok(Some(AttributeValue::LocationListsRef(_) | AttributeValue::SecOffset(_))) => {
            out.locals_skipped.location_lists += 1;
        }
        _ => {}
    }
}

/// The offset of a location that is `DW_OP_fbreg(offset)` and nothing else.
fn fbreg(mut ops: R<'_>) -> Option<i64> {
    if ops.read_u8().ok()? != constants::DW_OP_fbreg.0 {
        return None;
    }
    let offset = ops.read_sleb128().ok()?;
    ops.is_empty().then_some(offset)
}
