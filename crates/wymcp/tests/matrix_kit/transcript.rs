//! What a conversation answered where the eras agree, step by step, so the answers of every
//! path can be compared whole (a field no step asserts cannot drift between paths either).

use serde_json::Value;

use super::Path;

/// The payloads one path answered, in the script's order, each under its step's label.
#[derive(Debug)]
pub(crate) struct Transcript {
    pub(crate) path: Path,
    entries: Vec<(&'static str, Value)>,
}

impl Transcript {
    pub(crate) fn new(path: Path) -> Transcript {
        Transcript {
            path,
            entries: Vec::new(),
        }
    }

    /// Records what step `label` answered (its era-specific fields already stripped).
    pub(crate) fn record(&mut self, label: &'static str, payload: Value) {
        self.entries.push((label, payload));
    }

    /// Asserts `other` recorded the same steps with the same payloads.
    pub(crate) fn assert_same_as(&self, other: &Transcript) {
        let labels = |t: &Transcript| t.entries.iter().map(|(l, _)| *l).collect::<Vec<_>>();
        assert_eq!(
            labels(self),
            labels(other),
            "{:?} and {:?} ran different steps",
            self.path,
            other.path
        );
        for ((label, mine), (_, theirs)) in self.entries.iter().zip(&other.entries) {
            assert_eq!(
                mine, theirs,
                "{label}: {:?} and {:?} answered differently",
                self.path, other.path
            );
        }
    }

    /// This transcript without step `label`.
    pub(crate) fn without(mut self, label: &str) -> Transcript {
        self.entries.retain(|(l, _)| *l != label);
        self
    }

    /// How many steps were recorded.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
