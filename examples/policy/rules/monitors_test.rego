package main

monitor(spec) := {
	"kind": "Monitor",
	"address": "Monitor/checkout-errors",
	"spec": object.union({"slug": "checkout-errors", "labels": {"team": "checkout"}}, spec),
	"source": {"file": "monitors.yaml", "line": 1},
	"environment": null,
}

test_a_monitor_without_a_notification_policy_is_denied if {
	denials := deny with input as monitor({})
	denials == {"every Monitor is routed to a notification policy: set `notification_policy_slug`"}
}

test_an_empty_notification_policy_is_denied if {
	denials := deny with input as monitor({"notification_policy_slug": ""})
	count(denials) == 1
}

test_a_routed_monitor_passes if {
	denials := deny with input as monitor({"notification_policy_slug": "checkout-oncall"})
	count(denials) == 0
}
