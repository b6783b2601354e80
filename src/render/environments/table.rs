//! The summary table that opens a report of several environments: one row per environment,
//! its counts, or its failure in place of them.

use std::fmt::Write as _;

use super::EnvFailure;
use crate::util::output::{Inert, Markdown};

/// One environment's row: its counts in the table's columns, or why it has none.
pub(super) struct Row {
    pub name: String,
    pub cells: Result<Vec<usize>, EnvFailure>,
}

/// How much of a failure's message a row shows (its section shows all of it).
const SHORT_MESSAGE: usize = 100;

/// The text table: the names left-aligned, the counts right-aligned under their column, a
/// failure written across the counts.
pub(super) fn text(columns: &[&str], rows: &[Row]) -> String {
    let names: Vec<String> = rows.iter().map(|r| Inert(&r.name).to_string()).collect();
    let first = "environment";
    let name_width = names
        .iter()
        .map(|n| n.chars().count())
        .chain([first.len()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .filter_map(|r| r.cells.as_ref().ok())
                .map(|cells| cells.get(i).map_or(0, |n| n.to_string().len()))
                .chain([c.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("  {first:<name_width$}");
    for (c, w) in columns.iter().zip(&widths) {
        let _ = write!(out, "  {c:>w$}");
    }
    out.push('\n');
    for (row, name) in rows.iter().zip(&names) {
        // Padded by characters: an escaped name is as wide as it prints.
        let pad = name_width - name.chars().count();
        let _ = write!(out, "  {name}{}", " ".repeat(pad));
        match &row.cells {
            Ok(cells) => {
                for (n, w) in cells.iter().zip(&widths) {
                    let _ = write!(out, "  {n:>w$}");
                }
            }
            Err(f) => {
                let _ = write!(out, "  {}: {}", f.what(), Inert(f.short(SHORT_MESSAGE)));
            }
        }
        out.push('\n');
    }
    out
}

/// The Markdown table: a failure's row names it in its first count cell, the others empty.
pub(super) fn markdown(columns: &[&str], rows: &[Row]) -> String {
    let mut out = String::from("| environment |");
    for c in columns {
        let _ = write!(out, " {c} |");
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(columns.len()));
    out.push('\n');
    for row in rows {
        let _ = write!(out, "| <code>{}</code> |", Markdown(&row.name));
        match &row.cells {
            Ok(cells) => {
                for n in cells {
                    let _ = write!(out, " {n} |");
                }
            }
            Err(f) => {
                let _ = write!(
                    out,
                    " **{}**: {} |",
                    f.what(),
                    Markdown(f.short(SHORT_MESSAGE))
                );
                out.push_str(&" |".repeat(columns.len().saturating_sub(1)));
            }
        }
        out.push('\n');
    }
    out
}
