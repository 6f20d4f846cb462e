//! The attribution section: structures, who evicts whom, utilization, loads' strides (part of `report.json`'s contract, [`super`]).

use serde::{Deserialize, Serialize};

/// Data-structure attribution: which structures miss, and which evict which.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// The cache the attribution is for (`SIZE,ASSOC,LINE`).
    pub cache: String,
    /// One row per data structure, most misses first.
    pub structures: Vec<StructureRow>,
    /// Evictions by structure pairs.
    pub evicted_by: Matrix,
    /// Used bytes over fetched bytes of every line the cache fetched (docs/hardware.md).
    #[serde(default)]
    pub utilization: Option<f64>,
    /// The structures with at least 1 % of the fetched bytes, lowest utilization first.
    #[serde(default)]
    pub worst_utilized: Vec<UtilizationRow>,
    /// The loads that miss most, with their dominant stride and its regularity.
    #[serde(default)]
    pub loads: Vec<LoadSummaryRow>,
}

/// How much of the lines fetched for one data structure it used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UtilizationRow {
    /// Its name.
    pub name: String,
    /// Bytes its misses fetched.
    pub fetched_bytes: u64,
    /// Those touched while resident.
    pub used_bytes: u64,
    /// `used_bytes / fetched_bytes`.
    pub utilization: f64,
    /// Its share of all fetched bytes, %.
    pub fetched_pct: f64,
}

/// One load instruction's stride summary (`attribute`'s `loads`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadSummaryRow {
    /// Instruction address, `0x…`.
    pub pc: String,
    /// `file:line`, or what is known.
    pub code: String,
    /// Loads it made.
    pub refs: u64,
    /// Those that missed.
    pub misses: u64,
    /// Its dominant stride, bytes.
    pub stride: i64,
    /// The share of its consecutive pairs with that stride (0-1).
    pub regularity: f64,
    /// Utilization of the lines its misses fetched.
    pub utilization: Option<f64>,
}

/// One data structure's traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StructureRow {
    /// Its name (allocation site, symbol or address range).
    pub name: String,
    /// Data references to it.
    pub refs: u64,
    /// Their misses.
    pub misses: u64,
    /// `misses / refs`.
    pub miss_ratio: f64,
}

/// A labelled square-or-rectangular matrix of percentages: `values[row][col]` in `[0, 100]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Row labels (for `evicted_by`: the structure whose lines were evicted).
    pub rows: Vec<String>,
    /// Column labels (for `evicted_by`: the structure whose miss evicted them).
    pub cols: Vec<String>,
    /// Percentages, one row per row label, one column per column label.
    pub values: Vec<Vec<f64>>,
}
