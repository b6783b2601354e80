package main

bucket(spec) := {
	"kind": "Bucket",
	"address": "Bucket/checkout",
	"spec": object.union({"slug": "checkout", "name": "Checkout"}, spec),
	"source": {"file": "buckets.yaml", "line": 1},
	"environment": null,
}

test_a_bucket_without_labels_is_denied if {
	denials := deny with input as bucket({})
	denials == {"no `team` label: everything that takes labels names its owning team (`labels: {team: ...}`)"}
}

test_a_bucket_with_other_labels_only_is_denied if {
	denials := deny with input as bucket({"labels": {"env": "prod"}})
	count(denials) == 1
}

test_a_bucket_with_a_team_label_passes if {
	denials := deny with input as bucket({"labels": {"team": "checkout"}})
	count(denials) == 0
}

test_a_kind_without_labels_is_not_asked_for_one if {
	denials := deny with input as {"kind": "Team", "address": "Team/checkout", "spec": {"slug": "checkout"}}
	count(denials) == 0
}
