//! A dependency queue (after cargo's `dependency_queue.rs`): which actions may start now.
//!
//! Pure: the executor asks for ready work with [`DependencyQueue::dequeue`] and reports with
//! [`DependencyQueue::finish`]. An action is ready the moment all its own dependencies have
//! finished successfully; when one fails, everything that depends on it, directly or not, is
//! skipped and never dequeued.

use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Ready,
    Running,
    Done,
    Failed,
    Skipped,
}

#[derive(Debug)]
pub struct DependencyQueue {
    state: Vec<State>,
    left: Vec<usize>,
    dependents: Vec<Vec<usize>>,
    ready: BTreeSet<usize>,
    /// For a skipped action: the failed action that caused it.
    cause: Vec<Option<usize>>,
}

impl DependencyQueue {
    /// `deps[i]` lists the actions `i` waits for (each index below `deps.len()`; others are
    /// ignored).
    pub fn new(deps: &[Vec<usize>]) -> DependencyQueue {
        let n = deps.len();
        let mut dependents = vec![Vec::new(); n];
        let mut left = vec![0; n];
        for (i, ds) in deps.iter().enumerate() {
            let unique: BTreeSet<usize> = ds.iter().copied().filter(|&d| d < n && d != i).collect();
            left[i] = unique.len();
            for d in unique {
                dependents[d].push(i);
            }
        }
        let ready: BTreeSet<usize> = (0..n).filter(|&i| left[i] == 0).collect();
        let mut state = vec![State::Waiting; n];
        for &i in &ready {
            state[i] = State::Ready;
        }
        DependencyQueue {
            state,
            left,
            dependents,
            ready,
            cause: vec![None; n],
        }
    }

    /// The next action that may start (lowest index first), now marked running.
    pub fn dequeue(&mut self) -> Option<usize> {
        let i = self.ready.pop_first()?;
        self.state[i] = State::Running;
        Some(i)
    }

    /// Reports a running action as finished. On failure, returns the actions skipped because
    /// of it, in index order.
    pub fn finish(&mut self, i: usize, ok: bool) -> Vec<usize> {
        if self.state.get(i) != Some(&State::Running) {
            return vec![];
        }
        if ok {
            self.state[i] = State::Done;
            for k in 0..self.dependents[i].len() {
                let d = self.dependents[i][k];
                self.left[d] -= 1;
                if self.left[d] == 0 && self.state[d] == State::Waiting {
                    self.state[d] = State::Ready;
                    self.ready.insert(d);
                }
            }
            return vec![];
        }
        self.state[i] = State::Failed;
        let mut skipped = BTreeSet::new();
        let mut stack = vec![i];
        while let Some(j) = stack.pop() {
            for &d in &self.dependents[j] {
                if matches!(self.state[d], State::Waiting | State::Ready) {
                    self.state[d] = State::Skipped;
                    self.ready.remove(&d);
                    self.cause[d] = Some(i);
                    skipped.insert(d);
                    stack.push(d);
                }
            }
        }
        skipped.into_iter().collect()
    }

    /// Nothing is ready or running any more.
    pub fn is_finished(&self) -> bool {
        self.ready.is_empty() && !self.state.contains(&State::Running)
    }

    /// The failed action that made `i` skipped.
    pub fn cause(&self, i: usize) -> Option<usize> {
        self.cause.get(i).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_each_action_when_its_own_dependencies_finish() {
        // 0 → 2, 1 → 3, 2 → 3
        let mut q = DependencyQueue::new(&[vec![], vec![], vec![0], vec![1, 2]]);
        assert_eq!(q.dequeue(), Some(0));
        assert_eq!(q.dequeue(), Some(1));
        assert_eq!(q.dequeue(), None);
        q.finish(0, true);
        assert_eq!(q.dequeue(), Some(2), "2 does not wait for 1");
        q.finish(2, true);
        assert_eq!(q.dequeue(), None, "3 still waits for 1");
        q.finish(1, true);
        assert_eq!(q.dequeue(), Some(3));
        q.finish(3, true);
        assert!(q.is_finished());
    }

    #[test]
    fn a_failure_skips_its_dependents_only() {
        // 0 → 1 → 2, 3 independent, 4 waits on 2 and 3
        let mut q = DependencyQueue::new(&[vec![], vec![0], vec![1], vec![], vec![2, 3]]);
        assert_eq!(q.dequeue(), Some(0));
        assert_eq!(q.dequeue(), Some(3));
        assert_eq!(q.finish(0, false), vec![1, 2, 4]);
        assert_eq!(q.cause(4), Some(0));
        q.finish(3, true);
        assert_eq!(q.dequeue(), None);
        assert!(q.is_finished());
    }

    #[test]
    fn duplicate_and_self_dependencies_are_harmless() {
        let mut q = DependencyQueue::new(&[vec![0], vec![0, 0, 9]]);
        assert_eq!(q.dequeue(), Some(0));
        q.finish(0, true);
        assert_eq!(q.dequeue(), Some(1));
        assert_eq!(q.finish(7, true), Vec::<usize>::new());
    }
}
