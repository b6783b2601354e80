//! Work on all cores that finishes when its own jobs do.

/// `f` of every item, on the rayon pool, in the items' order: each item one job, with no
/// join tree over them. A `par_iter` splits its items by joins, and a thread waiting at a
/// join runs any job of the pool meanwhile, so the whole `par_iter` can end only once such
/// jobs end too: the manifests' load, run beside the list pages' work, ended some 60 ms
/// after its last file was read (the plan of the harness's 10,000), and everything waiting for
/// it waited as long. Jobs spawned apart end each on its own, and the scope runs on the
/// calling thread: called from outside the pool (the load's own thread), it waits without
/// taking up a job of the pool, so it ends when its last item does.
pub fn each<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out: Vec<Option<R>> = items.iter().map(|_| None).collect();
    rayon::in_place_scope_fifo(|scope| {
        let f = &f;
        for (slot, item) in out.iter_mut().zip(items) {
            scope.spawn_fifo(move |_| *slot = Some(f(item)));
        }
    });
    // Every job ran (a panic in one goes on at the scope's end), so every slot is filled.
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_item_in_its_order() {
        let items: Vec<u64> = (0..1000).collect();
        let out = super::each(&items, |n| n * n);
        assert_eq!(out, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert!(super::each(&[] as &[u8], |_| 1).is_empty());
    }
}
