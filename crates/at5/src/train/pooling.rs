//! Which position a task's output reads: its pooling, and the query whose prior the reports
//! show.
use crate::data::TaskKind;
use crate::nn::Pooling;

/// The pooling the paper uses for a task: the last slot, or the mean for Process-50 (whose
/// label is a property of the whole sequence).
pub fn pooling_for(kind: TaskKind) -> Pooling {
    match kind {
        TaskKind::Process50 => Pooling::Mean,
        TaskKind::Reber | TaskKind::Adding | TaskKind::LagK => Pooling::Last,
    }
}

/// The query a task reads: the last slot for last-slot pooling, the first for first-slot
/// pooling, otherwise the middle of the sequence.
pub fn pooled_query(pooling: Pooling, len: usize) -> usize {
    match pooling {
        Pooling::Last => len - 1,
        Pooling::First => 0,
        Pooling::Mean => len / 2,
    }
}
