//! What `export` and `pull` say about what they did (REDTEAM D16).

use cfgctl::api::registry::Kind;
use cfgctl::emulator::Config;
use serde_json::json;

use crate::support::{Cfgctl, Tenant};

/// `export --dashboards-as-files` counts resources, not the files their documents went to.
#[tokio::test]
async fn export_with_dashboard_files_counts_resources() {
    let t = Tenant::start(Config::default()).await;
    let r = t
        .create(Kind::named("Bucket"), json!({"slug": "b", "name": "B"}))
        .await;
    assert!(r.status < 300, "{r:?}");
    for slug in ["d1", "d2"] {
        let doc = json!({"title": slug, "panels": []}).to_string();
        let r = t
            .create(
                Kind::named("ClassicDashboard"),
                json!({"slug": slug, "name": slug, "bucket_slug": "b", "dashboard_json": doc}),
            )
            .await;
        assert!(r.status < 300, "{r:?}");
    }
    for files in [false, true] {
        let out = tempfile::tempdir().unwrap();
        let o = out.path().join("x");
        let o = o.to_str().unwrap();
        let mut args = vec!["export", "--out", o];
        if files {
            args.push("--dashboards-as-files");
        }
        let r = Cfgctl::new(&t).args(&args).run().await;
        assert_eq!(r.code, 0, "{}", r.transcript());
        assert_eq!(
            r.stdout,
            format!("exported 3 resources (2 kinds) from [TARGET] to {o}\n"),
            "files: {files}"
        );
    }
}
