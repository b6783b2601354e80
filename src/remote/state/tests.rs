//! A deferred reading against one worked out as its pages arrive.

use super::*;
use serde_json::json;

/// A reading that works its pages out as they arrive ([`WorkOut`] started before the
/// first page) reads to what working them out at the end reads to.
#[tokio::test(flavor = "multi_thread")]
async fn pages_worked_out_as_they_arrive_read_as_pages_worked_out_at_the_end() {
    let config = crate::emulator::Config {
        page_size: 2,
        max_page_size: 2,
        ..crate::emulator::Config::default()
    };
    let emulator = crate::emulator::Emulator::start(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = Client::new(&crate::remote::client::ClientConfig::new(emulator.url())).unwrap();
    let team = Kind::from_name("Team").unwrap();
    // Teams of ~2.5 KB in pages of two: the two full pages are worked out on the rayon pool,
    // the last one (a team) at once, on the blocking threads (`SMALL_PAGE`).
    let long = "n".repeat(2500);
    for i in 0..5 {
        let spec = json!({"slug": format!("t{i}"), "name": format!("Team {i} {long}")});
        client
            .create(team, &spec, crate::api::wire::Commit::Apply)
            .await
            .unwrap();
    }
    let at_the_end = list_deferred(&client).await.unwrap();
    let work = WorkOut::default();
    work.start(&Expected::default());
    let as_they_arrive = list_deferred_until(&client, &work).await.unwrap();
    let pages = |l: &Listing| {
        let (_, pages, _) = l.kinds.iter().find(|(k, ..)| *k == team).unwrap();
        let working = pages
            .iter()
            .filter(|p| matches!(p, Page::Working(_)))
            .count();
        (pages.len(), working)
    };
    assert_eq!(pages(&at_the_end), (3, 0), "five teams in pages of two");
    assert_eq!(pages(&as_they_arrive), (3, 3));
    assert_eq!(at_the_end.answers, as_they_arrive.answers);

    let a = at_the_end.finish(&Expected::default()).unwrap();
    let b = as_they_arrive.finish(&Expected::default()).unwrap();
    assert_eq!(a.warnings, b.warnings);
    assert_eq!(a.current.known, b.current.known);
    let objects = |f: &Fetched| -> Vec<_> {
        f.current
            .resources
            .iter()
            .map(|(address, o)| (address.to_string(), o.digest(), o.value()))
            .collect()
    };
    assert_eq!(objects(&a), objects(&b));
    let teams = a.current.resources.keys().filter(|k| k.kind == team);
    let long_texts = a.current.resources.iter().filter(|(k, o)| {
        k.kind == team && serde_json::to_vec(&o.value()).unwrap().len() > SMALL_PAGE / 2
    });
    assert_eq!(
        long_texts.count(),
        5,
        "two teams fill more than a small page"
    );
    assert_eq!(teams.count(), 5);
}
