//! `import prometheus`: a credential inside a URL (REDTEAM D6a, D7) is never written in clear,
//! and a reference in a field the API keeps in clear (so plans would print its value) is
//! reported as such in IMPORT.md.

use crate::support::{read, write, Cfgctl};

#[tokio::test]
async fn url_credentials_are_never_written_and_a_shown_reference_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "empty.yaml", "groups: []\n");
    write(
        d,
        "am.yaml",
        "route: {receiver: team-api, routes: [{receiver: r1, matchers: [x=\"1\"]}]}\nreceivers:\n- name: team-api\n  webhook_configs:\n  - url: https://user:webhookpass@hooks.example.com/x?token=querysecret\n- name: r1\n  slack_configs:\n  - api_url_file: /etc/secrets/slack\n    http_config:\n      proxy_url: http://puser:proxypass2-secret@proxy:3128\n",
    );
    let r = Cfgctl::bare()
        .dir(d)
        .args(&[
            "import",
            "prometheus",
            "empty.yaml",
            "--bucket",
            "platform",
            "--team",
            "platform",
            "--alertmanager",
            "am.yaml",
            "--out",
            "out",
        ])
        .run()
        .await;
    assert_eq!(r.code, 0, "{}", r.transcript());
    let notifiers = read(d, "out/alertmanager/notifiers.yaml");
    for secret in ["webhookpass", "querysecret", "proxypass2-secret"] {
        assert!(!notifiers.contains(secret), "{notifiers}");
        assert!(
            !r.stderr.contains(secret) && !r.stdout.contains(secret),
            "{}",
            r.transcript()
        );
    }
    assert!(
        notifiers.contains("url: ${env:AM_TEAM_API_WEBHOOK_URL}\n"),
        "{notifiers}"
    );
    assert!(
        notifiers.contains("proxy_url: http://puser@proxy:3128\n"),
        "{notifiers}"
    );
    let report = read(d, "out/IMPORT.md");
    assert!(
        report.contains("| am.yaml:5 | receiver team-api | webhook `url` is a credential written as `${env:AM_TEAM_API_WEBHOOK_URL}`, but the API keeps `webhook.url` in clear: every plan (and pull-request comment) shows the variable's value; carry the credential in `http_config` (`bearer_token`, `basic_auth`) instead |"),
        "{report}"
    );
    assert!(
        report.contains("| am.yaml:10 | receiver r1 | http_config `proxy_url`: its password was left out (the API keeps `proxy_url` in clear, so every plan would show it); give the proxy its credential another way |"),
        "{report}"
    );
}
